# Try the command on the CPU, small: minutes, and the file is for looking at, not for sending
benchlib contribute --device cpu --tiny --out contribution-try
