#!/usr/bin/env python3
"""Re-extract pve-api-subset.json from the full official schema.

Usage: extract.py FULL_SCHEMA_JSON > pve-api-subset.json
Keeps, for every "METHOD /path" in served.txt, the method object unchanged.
"""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
full = json.load(open(sys.argv[1]))
index = {}
def walk(node):
    index[node["path"]] = node
    for child in node.get("children", []):
        walk(child)
for node in full:
    walk(node)
out = []
for line in open(os.path.join(here, "served.txt")):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    method, path = line.split(" ", 1)
    info = index[path]["info"][method]
    if out and out[-1]["path"] == path:
        out[-1]["info"][method] = info
    else:
        out.append({"path": path, "info": {method: info}})
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
