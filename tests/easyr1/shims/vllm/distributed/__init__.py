parallel_state = None
