#!/usr/bin/env python3
# Re-creates faceres-subset.safetensors: a few real float32 tensors of faceres-deep.f32.safetensors
# (see SOURCE.md), copied byte for byte (values unchanged) into a small safetensors file for the tests.
# Usage: python3 make_subset.py PATH/TO/faceres-deep.f32.safetensors faceres-subset.safetensors
import json, struct, sys

TENSORS = [
    "feats/kernel",                       # [1024, 256]
    "conv_pw_5/convolution/merged_input",  # [1, 1, 256, 256]
    "conv_pw_4/convolution/merged_input",  # [1, 1, 128, 256]
    "age_pred/kernel",                     # [256, 100]
    "conv_dw_7/depthwise_kernel",          # [3, 3, 512, 1]
    "conv1/convolution/merged_input",      # [3, 3, 3, 32]
    "gender_pred/kernel",                  # [256, 1]
    "age_pred/bias",                       # [100]
]

src, dst = sys.argv[1], sys.argv[2]
d = open(src, "rb").read()
n = struct.unpack("<Q", d[:8])[0]
h = json.loads(d[8:8 + n])
meta = dict(h["__metadata__"])
meta["subset_of"] = "faceres-deep.f32.safetensors (tensors copied byte for byte; see tests/data/weights/SOURCE.md)"
out_h, blobs, off = {"__metadata__": meta}, [], 0
for name in TENSORS:
    v = h[name]
    b, e = v["data_offsets"]
    blobs.append(d[8 + n + b:8 + n + e])
    out_h[name] = {"dtype": v["dtype"], "shape": v["shape"], "data_offsets": [off, off + (e - b)]}
    off += e - b
text = json.dumps(out_h, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
