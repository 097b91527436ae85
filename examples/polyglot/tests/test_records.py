"""JSON-lines records. records.py tries to import fastjson_local first; it
does not exist, so this test depends on its absence."""
import unittest

import records


class RecordsTest(unittest.TestCase):
    def test_the_portable_codec_is_used(self):
        self.assertEqual(records.CODEC_NAME, "slowjson")

    def test_dump_is_compact_and_sorted(self):
        text = records.dump_records([{"sku": "A1", "qty": 2}, {"qty": 1, "sku": "B7"}])
        self.assertEqual(text, '{"qty":2,"sku":"A1"}\n{"qty":1,"sku":"B7"}\n')

    def test_round_trip(self):
        rows = [{"sku": "C3", "qty": 5, "tags": ["new"]}]
        self.assertEqual(records.load_records(records.dump_records(rows)), rows)


if __name__ == "__main__":
    unittest.main()
