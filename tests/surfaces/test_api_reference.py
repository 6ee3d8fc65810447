"""The API documents itself from the protos' comments: the OpenAPI document has required
fields, descriptions and examples, /docs renders it from packaged assets (no CDN), gRPC
reflection shows the same comments, and /, /a and /healthz lead somewhere useful."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import httpx
from playwright.async_api import async_playwright

from libs import proto_docs
from tests.surfaces.test_library_page import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS


async def get(platform, path: str, **kwargs) -> httpx.Response:
    async with httpx.AsyncClient(base_url=platform.http, timeout=30) as http:
        return await http.get(path, **kwargs)


async def test_the_openapi_document_carries_the_protos_comments(platform):
    document = (await get(platform, "/openapi.json")).json()
    retrieve = document["paths"]["/v1/memory/retrieve"]["post"]
    body = retrieve["requestBody"]["content"]["application/json"]
    assert body["schema"]["required"] == ["runId"]
    assert body["example"]["semanticQuery"] == "how are invoice numbers generated"
    assert "receipt" in body["schema"]["properties"]["runId"]["description"]
    assert retrieve["description"].startswith(proto_docs.doc(
        "agentmemory.gateway.v1.RetrievalService.RetrieveContext").text[:40])
    caller = document["components"]["schemas"]["agentmemory.gateway.v1.Caller"]["properties"]
    assert caller["agentId"]["examples"] == ["concierge"]
    assert "act_for_users" in caller["userId"]["description"]
    described = [p for schema in document["components"]["schemas"].values()
                 for p in schema.get("properties", {}).values() if "description" in p]
    assert len(described) > 120
    assert {"/v1/keys", "/v1/tokens"} <= set(document["paths"])


async def test_the_reference_page_is_served_from_packaged_assets(platform, tmp_path):
    page = await get(platform, "/docs")
    assert page.status_code == 200 and "/openapi.json" in page.text
    assert not re.search(r"(src|href)=\"https?://", page.text)  # nothing from a CDN
    for asset in re.findall(r"(?:src|href)=\"(/docs/assets/[^\"]+)\"", page.text):
        served = await get(platform, asset)
        assert served.status_code == 200 and len(served.content) > 10_000, asset
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                   args=CHROMIUM_ARGS)
        try:
            tab = await browser.new_page()
            await tab.goto(f"{platform.http}/docs")
            await tab.get_by_text("/v1/memory/retrieve").first.wait_for(timeout=30_000)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            await tab.screenshot(path=str(ARTIFACTS / "api-reference.png"), full_page=False)
            assert await tab.get_by_text("agentmemory gateway").count()
        finally:
            await browser.close()


async def test_the_front_page_the_library_link_and_health(platform):
    front = await get(platform, "/")
    assert front.status_code == 200 and 'href="/docs"' in front.text
    jump = await get(platform, "/a", params={"account": "acme"})
    assert (jump.status_code, jump.headers["location"]) == (303, "/a/acme/memory")
    odd = await get(platform, "/a", params={"account": "../x"})
    assert (odd.status_code, odd.headers["location"]) == (303, "/")
    health = await get(platform, "/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "SERVING"})


def test_grpc_reflection_shows_the_same_comments(platform):
    grpcurl = shutil.which("grpcurl", path=os.path.dirname(sys.executable))
    described = subprocess.run(
        [grpcurl, "-plaintext", platform.grpc, "describe", "agentmemory.gateway.v1.KeyService"],
        capture_output=True, text=True, timeout=60)
    assert described.returncode == 0, described.stderr
    assert "A new key of the caller's account" in described.stdout
    health = subprocess.run([grpcurl, "-plaintext", platform.grpc, "describe",
                             "grpc.health.v1.Health"], capture_output=True, text=True, timeout=60)
    assert health.returncode == 0 and "Check" in health.stdout
