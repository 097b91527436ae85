"""The portable JSON codec: compact, keys sorted, so output is stable."""
import json

NAME = "slowjson"


def dumps(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def loads(text):
    return json.loads(text)
