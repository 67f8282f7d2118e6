#!/usr/bin/env python3
"""Load conformance tables into the local object-store emulators the browser tests use.

  stores.py s3    ENDPOINT BUCKET CORPUS TABLE...   moto S3: bucket + CORS rule + objects
  stores.py azure ENDPOINT CONTAINER CORPUS TABLE... azurite: container + CORS rules +
                                                     objects; prints a container SAS (r, l)
  stores.py s3-private / azure-private ...           the same without any CORS rule (and
                                                     private S3 objects): a tab can only
                                                     read them through a relay

Only 127.0.0.1 endpoints are accepted: these are test emulators, never real accounts.
"""
import datetime
import os
import sys
from urllib.parse import urlparse

# azurite's well-known development account (public, documented by Microsoft)
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def files(corpus, tables):
    for t in tables:
        root = os.path.join(corpus, "tables", t)
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                yield p, f"tables/{t}/" + os.path.relpath(p, root).replace(os.sep, "/")


def s3(endpoint, bucket, corpus, tables, private=False):
    import boto3

    c = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="deltalens-test",
        aws_secret_access_key="deltalens-test-secret",
    )
    c.create_bucket(Bucket=bucket)
    if private:
        n = 0
        for path, key in files(corpus, tables):
            c.upload_file(path, bucket, key)
            n += 1
        print(f"s3: {n} private objects in {bucket}, no CORS rule", file=sys.stderr)
        return
    c.put_bucket_cors(
        Bucket=bucket,
        CORSConfiguration={
            "CORSRules": [
                {
                    "AllowedOrigins": ["*"],
                    "AllowedMethods": ["GET", "HEAD"],
                    # "*" does not cover Authorization in browsers: name every header
                    "AllowedHeaders": [
                        "Range",
                        "Authorization",
                        "x-amz-date",
                        "x-amz-content-sha256",
                        "x-amz-security-token",
                    ],
                    "ExposeHeaders": ["Content-Range", "Content-Length", "ETag"],
                }
            ]
        },
    )
    n = 0
    for path, key in files(corpus, tables):
        # public-read: moto applies object ACLs to CORS preflights (which carry no
        # credentials), so private objects could never be fetched cross-origin there;
        # the tests still sign every request
        c.upload_file(path, bucket, key, ExtraArgs={"ACL": "public-read"})
        n += 1
    print(f"s3: {n} objects in {bucket}", file=sys.stderr)


def azure(endpoint, container, corpus, tables, private=False):
    from azure.storage.blob import (
        BlobServiceClient,
        ContainerSasPermissions,
        CorsRule,
        generate_container_sas,
    )

    conn = (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
        f"BlobEndpoint={endpoint};"
    )
    svc = BlobServiceClient.from_connection_string(conn)
    if not private:
        svc.set_service_properties(
            cors=[
                CorsRule(
                    allowed_origins=["*"],
                    allowed_methods=["GET", "HEAD", "OPTIONS"],
                    allowed_headers=["*"],
                    exposed_headers=["Content-Range", "Content-Length", "ETag"],
                    max_age_in_seconds=60,
                )
            ]
        )
    cont = svc.create_container(container)
    n = 0
    for path, key in files(corpus, tables):
        with open(path, "rb") as f:
            cont.upload_blob(key, f, overwrite=True)
        n += 1
    sas = generate_container_sas(
        ACCOUNT,
        container,
        account_key=KEY,
        permission=ContainerSasPermissions(read=True, list=True),
        expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=4),
    )
    print(f"azure: {n} blobs in {container}", file=sys.stderr)
    print(sas)


def main():
    kind, endpoint, name, corpus, *tables = sys.argv[1:]
    if urlparse(endpoint).hostname != "127.0.0.1":
        sys.exit(f"refusing {endpoint}: only emulators on 127.0.0.1")
    private = kind.endswith("-private")
    {"s3": s3, "azure": azure}[kind.removesuffix("-private")](endpoint, name, corpus, tables, private)


if __name__ == "__main__":
    main()
