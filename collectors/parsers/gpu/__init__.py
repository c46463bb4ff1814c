"""Parsers of GPU and collective-communication evidence: nvidia-smi, NVML, CUDA out-of-memory errors, NCCL logs
and PyTorch's flight recorder."""
