class LoRARequest:  # EasyR1 main imports it
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
