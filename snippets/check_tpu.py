"""Is there a TPU on this runtime, and can JAX see it?"""
import glob
import importlib.util
import os

# TPU VMs expose chips as device files: /dev/accel* (v2 to v4) or /dev/vfio/N (v5e and later).
device_files = sorted(glob.glob("/dev/accel*") + glob.glob("/dev/vfio/[0-9]*"))
print("TPU device files:", ", ".join(device_files) or "none")
print("libtpu installed:", importlib.util.find_spec("libtpu") is not None)
for name in ("TPU_ACCELERATOR_TYPE", "TPU_PROCESS_ADDRESSES", "ISTPUVM", "COLAB_TPU_ADDR"):
    if name in os.environ:
        print(f"{name}={os.environ[name]}")
if "COLAB_TPU_ADDR" in os.environ:
    print("COLAB_TPU_ADDR means a legacy TPU Node runtime; Colab replaced those with TPU VMs in 2024.")

if importlib.util.find_spec("jax") is None:
    print("JAX is not installed, so it cannot look for TPU chips.")
else:
    import jax

    devices = jax.devices()
    print(f"JAX {jax.__version__}: backend {jax.default_backend()!r}, "
          f"{len(devices)} device(s), kind {devices[0].device_kind!r}")
    if jax.default_backend() != "tpu":
        print("No TPU visible to JAX: code here runs on the", jax.default_backend().upper())
