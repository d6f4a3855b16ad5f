"""spark-submit entry of offsetguard's history job: ``spark-submit ... deploy/spark/history.py --source ...``.

Ship offsetguard's packages with ``--py-files offsetguard.zip`` (see deploy/spark/submit.sh) or bake them
into the image; the arguments are those of ``offsetguard pipeline history``.
"""

import sys

from pipeline.job import main

if __name__ == "__main__":
    sys.exit(main())
