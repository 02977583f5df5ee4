def get_adapter_absolute_path(path):  # EasyR1 main's verl/utils/vllm_utils.py imports it
    return path
