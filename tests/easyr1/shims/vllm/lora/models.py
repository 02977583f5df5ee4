class LoRAModel:  # EasyR1 main's verl/utils/vllm_utils.py imports it
    pass
