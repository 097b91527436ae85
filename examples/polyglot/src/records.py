"""Order records as JSON lines, one object per line.

The codec: a local fast drop-in (fastjson_local.py) if this checkout has
one, else the portable slowjson. fastjson_local.py does not exist here, so
every run looks for it and fails: ste records those failed lookups as
`absent` dependencies, and creating the file selects the tests that
import this module.
"""
try:
    import fastjson_local as codec
except ImportError:
    import slowjson as codec

CODEC_NAME = codec.NAME


def dump_records(records):
    return "".join(codec.dumps(record) + "\n" for record in records)


def load_records(text):
    return [codec.loads(line) for line in text.splitlines() if line.strip()]
