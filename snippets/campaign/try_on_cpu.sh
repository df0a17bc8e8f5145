# Try the command first, on the CPU and small: not for publishing, so not into results/
benchlib campaign --device cpu --tiny --out campaign-try
