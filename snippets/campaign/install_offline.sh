# On the GPU machine, in the folder that holds wheels/: install from those files only,
# next to the torch that is already there
pip install --no-index --find-links wheels "benchlib[campaign]"
# Check the GPU; results go to results/<machine id>/ under this folder
benchlib campaign
