# What this machine is: platform, CPU, memory, GPUs, software
benchlib probe
# Run the quick suite; writes results/<machine id>/<run id>.json
benchlib run --suite quick
# Check every results file against the schema
benchlib validate results
