"""Reading `replayer replay --json` output: kernels that print (printf) print before the report, and
lines the driver still held come after it, as the replayer exits."""

import json


def last_json_document(text):
    """The JSON report at the end of a replay's output."""
    start = text.rfind("\n{\n")
    return json.JSONDecoder().raw_decode(text[start + 1:] if start >= 0 else text)[0]


def read(path):
    """The JSON report in the replay output saved at `path`."""
    with open(path) as file:
        return last_json_document(file.read())
