# A maintainer, in a clone: file every contribution's runs under results/<machine id>/, then empty the inbox
benchlib import results/contributed/
git rm -q results/contributed/contribution-*.json
