# On the GPU machine: its Python and torch versions, the two arguments wheelhouse.sh takes
python3 -c 'import sys, torch; print("%d.%d" % sys.version_info[:2], torch.__version__)'
