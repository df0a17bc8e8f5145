# Hardware checks, one per line. In a notebook, put %%bash on the first line of the cell.
nvidia-smi                              # GPU model, memory (MiB), driver, running processes
grep -m1 "model name" /proc/cpuinfo     # CPU model
grep -c ^processor /proc/cpuinfo        # logical cores
grep -E "MemTotal|MemAvailable" /proc/meminfo   # RAM; "kB" here means KiB
df -h . /dev/shm                        # disk and shared memory; -h prints powers of 1024
