"""Copy a dataset archive from Google Drive to the VM's own disk once, then read it there.

Reading thousands of small files through the Drive mount is slow and can time out; one big
archive copies quickly and unpacks on the fast local disk.
"""
import os
import shutil
import time
import zipfile

from google.colab import drive

MOUNTPOINT = os.environ.get("DRIVE_MOUNTPOINT", "/content/drive")
ARCHIVE = os.path.join(MOUNTPOINT, "MyDrive", "datasets", os.environ.get("ARCHIVE", "my-dataset.zip"))
LOCAL_DIR = os.environ.get("LOCAL_DATA_DIR", "/content/data")

drive.mount(MOUNTPOINT)
os.makedirs(LOCAL_DIR, exist_ok=True)
start = time.perf_counter()
local_zip = shutil.copy(ARCHIVE, LOCAL_DIR)
with zipfile.ZipFile(local_zip) as archive:
    archive.extractall(LOCAL_DIR)
    count = len(archive.namelist())
os.remove(local_zip)
print(f"{count} files unpacked into {LOCAL_DIR} in {time.perf_counter() - start:.1f} s")
