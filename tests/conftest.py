import os
import sys

# tests import `compare` as a top-level helper module
sys.path.insert(0, os.path.dirname(__file__))
