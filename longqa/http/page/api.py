"""The page `longqa serve` serves at `/` for people, and the few reads it needs beside /ask and
/index (README, "The page"). The page is a client of the HTTP API: the same keys, grants and
progress events as the SDK; its static files ship in the package (longqa/http/page/), load nothing
from elsewhere and are served under a strict Content-Security-Policy.

    GET  /                          the page (index.html); /page/app.js, /page/app.css
    GET  /page/api/whoami           the key's tenant, grants and collections (with their documents)
    GET  /page/api/threads          the tenant's threads, newest first
    GET  /page/api/threads/{id}     one of them, turn by turn (another tenant's: 404)
    GET  /page/api/passage          ?collection&doc_id&start&end: the text around a cited span
    GET  /page/api/files            files under the documents root the key may index
    POST /page/api/upload           one file from the page into a collection (longqa/http/page/upload.py)
    POST /page/api/ask, /page/api/index   /ask and /index streamed as NDJSON events (longqa/http/page/stream.py)

Every endpoint names its caller by API key as /ask does (access.identify) and checks its grants
(longqa/http/page/data.py) before it reads anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from longqa.contracts.settings import Settings, SettingsError
from longqa.http.access import Denied, identify
from longqa.http.job_slots import Busy, JobSlots
from longqa.http.keys import KeyStore
from longqa.http.limits import ServerLimits
from longqa.http.page import data as page_data
from longqa.http.page import upload as page_upload
from longqa.http.page.headers import page_headers
from longqa.http.page.stream import stream_endpoint
from longqa.http.scrub import PathScrubber
from longqa.http.serve_input import BadRequest, read_body

STATIC = Path(__file__).parent  # index.html, app.js, app.css beside this module
FILES = {  # the page's files: nothing else is served from the folder
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


def _static(name: str, media: str):
    body = (STATIC / name).read_bytes()  # read once: the package's files do not change under a running server

    async def serve(request: Request) -> Response:
        return Response(body, media_type=media, headers=page_headers())

    return serve


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=page_headers())


def _error(message: str, status: int) -> JSONResponse:
    # the connection closes, as longqa serve's refusals do: a body the refusal left unread is not read (seen: an
    # upload refused with 413 went on being read, 9.5 GiB in 10 s, since uvicorn drains an unread body)
    extra = {"Connection": "close"}
    if status == 401:
        extra["WWW-Authenticate"] = 'Bearer realm="longqa"'
    return JSONResponse({"error": message}, status_code=status, headers=page_headers(extra))


def _reader(keys: KeyStore, deployment: Settings, read):
    """A GET endpoint: the caller identified, then `read(caller, request)` in a worker thread."""

    async def endpoint(request: Request) -> Response:
        try:
            caller = identify(keys, request.headers, request.client.host if request.client else None)
            return _json(await run_in_threadpool(read, caller, request))
        except Denied as e:
            return _error(str(e), e.status)
        except ValidationError as e:
            first = e.errors()[0]
            return _error(f"{'.'.join(map(str, first['loc']))}: {first['msg']}", 422)
        except SettingsError:
            return _error("the server's configuration cannot be read; its log says why", 503)

    return endpoint


def _uploader(keys: KeyStore, limits: ServerLimits, deployment: Settings, jobs: JobSlots):
    """POST /page/api/upload: the body read as every POST's is (longqa/http/serve.py), then longqa/http/page/upload.py,
    holding one of the key's index job slots."""
    scrub = PathScrubber(deployment)

    async def endpoint(request: Request) -> Response:
        try:
            caller = identify(keys, request.headers, request.client.host if request.client else None)
            if not caller.can("index"):  # refused before the body is read
                raise Denied(403, f"this key may not index (its grants: {', '.join(sorted(caller.grants))})")
            wanted = page_upload.parse_upload(await read_body(request, limits))
            jobs.take(caller)
            try:  # one upload is one file: it runs to its end, then the slot is free
                return _json(await run_in_threadpool(page_upload.upload, caller, deployment, wanted))
            finally:
                jobs.give(caller)
        except (Denied, BadRequest) as e:
            return _error(scrub(str(e)), e.status)
        except Busy as e:
            return _error(str(e), 429)
        except page_upload.UploadRefused as e:
            return _error(scrub(str(e)), 422)
        except SettingsError:
            return _error("the server's configuration cannot be read; its log says why", 503)

    return endpoint


def page_routes(keys: KeyStore, limits: ServerLimits, deployment: Settings) -> list[Route]:
    """The page's routes, mounted by longqa/http/serve.py's build_app."""
    from longqa.runner.threads import thread_checkpointer

    jobs = JobSlots(limits.max_index_jobs_per_key)  # the page's index runs and uploads, per key (as /index's)

    def whoami(caller, request: Request) -> dict:
        largest = min(limits.max_body_bytes * 3 // 4 - 4096, deployment.max_file_bytes)  # base64 in a JSON body
        return {**page_data.whoami(caller, deployment).model_dump(), "max_upload_bytes": largest}

    def threads(caller, request: Request) -> dict:
        return {"threads": page_data.threads(caller, thread_checkpointer(deployment))}

    def thread(caller, request: Request) -> dict:
        thread_id = request.path_params["thread_id"]
        if not 0 < len(thread_id) <= 256:
            raise Denied(404, "no such thread")
        return page_data.thread_turns(caller, thread_checkpointer(deployment), thread_id)

    def passage(caller, request: Request) -> dict:
        query = page_data.PassageQuery.model_validate(dict(request.query_params))
        return page_data.passage(caller, deployment, query).model_dump()

    def files(caller, request: Request) -> dict:
        return page_data.files(caller, deployment)

    index_html = _static("index.html", "text/html; charset=utf-8")
    return [
        Route("/", index_html, methods=["GET"]),
        *(Route(f"/page/{name}", _static(name, media), methods=["GET"]) for name, media in FILES.items()),
        Route("/page/api/whoami", _reader(keys, deployment, whoami), methods=["GET"]),
        Route("/page/api/threads", _reader(keys, deployment, threads), methods=["GET"]),
        Route("/page/api/threads/{thread_id}", _reader(keys, deployment, thread), methods=["GET"]),
        Route("/page/api/passage", _reader(keys, deployment, passage), methods=["GET"]),
        Route("/page/api/files", _reader(keys, deployment, files), methods=["GET"]),
        Route("/page/api/upload", _uploader(keys, limits, deployment, jobs), methods=["POST"]),
        Route("/page/api/ask", stream_endpoint("ask", keys, limits, deployment, jobs), methods=["POST"]),
        Route("/page/api/index", stream_endpoint("index", keys, limits, deployment, jobs), methods=["POST"]),
    ]
