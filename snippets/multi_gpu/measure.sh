# Kaggle, GPU T4 x2: PyTorch DDP through torchrun, on one T4 and then on both.
benchlib launch --size standard
# Kaggle, TPU v5e-8: JAX (preinstalled there), on one chip and then on all 8.
benchlib launch --framework jax --size standard
