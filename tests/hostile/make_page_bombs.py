# Writes two hostile Parquet files (fuzz/regressions/scan_parquet/page-claims-1MiB-*):
# one binary value of 512 MiB of zeros, gzip- or zstd-compressed by pyarrow (522 KB and
# 17 KB), whose data page header is then rewritten to claim 1 MiB uncompressed (a
# redundant varint of the same length, so no offset moves). A codec that trusts the
# stream over the header inflates 512 MiB before the size is found wrong.
#   python3 tests/hostile/make_page_bombs.py fuzz/regressions/scan_parquet
import os, sys
import pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
def varint(n):
    out=bytearray()
    while True:
        b=n&0x7f; n>>=7
        if n: out.append(b|0x80)
        else: out.append(b); return bytes(out)
def padded(n, length):
    v=bytearray(varint(n))
    assert len(v)<=length
    while len(v)<length:
        v[-1]|=0x80; v.append(0)
    return bytes(v)
for codec in ["gzip","zstd"]:
    t=pa.table({"b": pa.array([b"\0"*(512<<20)], pa.binary())})
    pq.write_table(t, f"{out}/{codec}.parquet", compression=codec, use_dictionary=False, write_statistics=False, data_page_size=1<<30, store_schema=False, write_page_index=False)
    data=bytearray(open(f"{out}/{codec}.parquet","rb").read())
    m=pq.ParquetFile(f"{out}/{codec}.parquet").metadata
    cc=m.row_group(0).column(0)
    off=cc.data_page_offset
    assert data[off]==0x15, hex(data[off])
    # field 1 type: varint
    i=off+1
    while data[i]&0x80: i+=1
    i+=1
    assert data[i]==0x15, hex(data[i])
    j=i+1
    start=j
    while data[j]&0x80: j+=1
    j+=1
    length=j-start
    zz=lambda n:(n<<1)^(n>>63)
    claimed=1<<20
    data[start:j]=padded(zz(claimed), length)
    open(f"{out}/page-claims-1MiB-{codec}-inflates-512MiB","wb").write(data)
    os.remove(f"{out}/{codec}.parquet")
    print(codec, len(data), "varint len", length, "compressed", cc.total_compressed_size)
