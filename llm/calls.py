"""One LLM call = one usage record per attempt (node, tokens in/out, seconds, outcome).

- Every call carries its node's output cap (`max_tokens`), so no model writes without end.
- Tokens come from the provider's `usage` when it gives sane ones; otherwise they are estimated with
  the offline tokenizer and marked `estimated`. A failed attempt is recorded too: a timed-out one is
  charged its prompt and its cap (the most the server may have generated), a refused one its prompt.
- Retries are ours, not the client's (it retries timeouts blindly, starting the work over): a 429, a
  5xx or a dropped connection is retried up to `max_retries` times; a timeout, a context-length
  error or another 4xx is not.
- `schema` asks for JSON-schema constrained output (`response_format`) where the endpoint speaks
  OpenAI's API; an endpoint that refuses it is asked again without it, and remembered.
- A reply cut at the cap (`finish_reason == "length"`) comes back marked `truncated`. So does one
  that ran past it (a server that ignores `max_tokens`): its body is read no further than the cap
  allows and its text is cut to what the call asked for before anything reads it (llm/reply_bounds.py).
- `call_llm` waits in the caller's thread; `acall_llm` is the same call awaited on the event loop
  (`ainvoke`: the server's path, llm/model_node.py). Both follow one plan (`_Call`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict, Unpack

from langchain_core.messages import AIMessage, BaseMessage
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from longqa.retrieval.index.progress import emit
from longqa.retrieval.tokens import default_counter

from .budget import prompt_tokens as counted_prompt
from .budget import served_tokens
from .budget_arithmetic import affordable, retry_affordable, spent
from .errors import (
    context_numbers,
    cut_structured_reply,
    is_context_length,
    is_retryable,
    is_timeout,
    malformed_reply,
    refuses_schema,
    wait_before_retry,
)
from .models import ModelSpec, chat_model, chat_model_for_loop, speaks_openai
from .reply_bounds import PAST_CAP, kept_reply, overlong

log = logging.getLogger(__name__)


class LLMError(RuntimeError):
    """The model could not answer: the node degrades or the run ends with this message in its
    output. `usage` holds the records of every attempt (they cost tokens too); `kind` is
    "timeout", "deadline", "context_length", "budget" (not sent: the question budget cannot pay for
    it) or "error"; for a context-length error `prompt_tokens` and
    `context_size` are the server's numbers when it said them."""

    def __init__(
        self,
        message: str,
        usage: list[dict] | None = None,
        kind: str = "error",
        prompt_tokens: int | None = None,
        context_size: int | None = None,
    ):
        super().__init__(message)
        self.usage = usage or []
        self.kind = kind
        self.prompt_tokens = prompt_tokens
        self.context_size = context_size
        self.kept: list = []  # the items of the prompt it was asked with (the driver sets them)
        self.chosen: str | None = None  # how a window prompt's items were chosen (the driver sets it)
        self.notes: list[str] = []  # what the driver did to fit that prompt (the driver sets them)


class Unaffordable(LLMError):
    """Not sent: the question budget cannot pay for the call; `cap` is what it leaves the call. A
    node catches it as any LLMError (its paper's degraded form) or by name for its own words."""

    def __init__(self, message: str, cap: int | None):
        super().__init__(message, kind="budget")
        self.cap = cap


@dataclass
class Reply:
    """A model's answer: its text, the ledger of its attempts, and (from the model-node driver)
    the prompt's items it was asked with: `kept`, `dropped` to fit the budget, the best one `cut`;
    for a prompt sized by the model's window, how they were `chosen` and what the driver did to fit
    it (`notes`: the server's count, a refusal retried smaller)."""

    text: str
    usage: list[dict]  # one record per attempt, the successful one last
    finish_reason: str | None = None
    meta: dict = field(default_factory=dict)
    kept: list = field(default_factory=list)
    dropped: int = 0
    cut: int | None = None  # the tokens the only item shown was cut to, where it was
    chosen: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        """The model hit its cap: the text is cut, not an answer."""
        return self.finish_reason == "length"

    @property
    def past_cap(self) -> str | None:
        """How the reply ran past its cap, where the server ignored it (then `truncated` too)."""
        return self.meta.get(PAST_CAP)


# endpoints (base URLs) that refused `response_format`: asked without it from then on
_NO_SCHEMA: set[str | None] = set()
_NO_SCHEMA_LOCK = threading.Lock()


class CallTimeout(TimeoutError):
    """The call ran past its wall-clock bound (its timeout, or what is left of the run's deadline)."""


class DeadlineReached(CallTimeout):
    """The run's deadline: no attempt (a retry included) starts after it, none runs past it."""


def _within(seconds: float, call: Callable[[], AIMessage]) -> AIMessage:
    """`call()` bounded in wall-clock time. The client's own timeout is per read, so a server that
    trickles a byte at a time never trips it; this bound does. (The abandoned request finishes in
    its daemon thread; its context is copied so LangGraph's callbacks still see the call.)"""
    done = threading.Event()
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome["reply"] = context.run(call)
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e
        finally:
            done.set()

    threading.Thread(target=run, name="longqa-llm-call", daemon=True).start()
    if not done.wait(seconds):
        raise CallTimeout(f"no complete reply within {seconds:.1f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["reply"]


@dataclass
class _Call:
    """One model call as both paths make it: the client, its arguments, the ledger of attempts."""

    spec: ModelSpec
    node: str
    messages: list[BaseMessage]
    max_tokens: int
    deadline_at: float | None
    model: Any
    kwargs: dict[str, Any]
    allowance: int | None = None  # the most input tokens this call's attempts may cost together
    records: list[dict] = field(default_factory=list)
    unaffordable: bool = False  # a retry was due and the question budget could not pay for it
    counted: int | None = None  # the prompt's size as the budget counts it (taken off the event loop)

    def bound(self) -> tuple[float, bool]:
        """This attempt's wall-clock bound (its timeout, or what is left of the run's deadline), and
        whether the deadline set it."""
        left = None if self.deadline_at is None else self.deadline_at - time.time()
        if left is not None and left <= 0:
            raise DeadlineReached("the run's deadline (deadline_s) passed before this attempt")
        by_deadline = left is not None and left < self.spec.timeout_s
        return (left if by_deadline else self.spec.timeout_s), by_deadline

    def drops_schema(self, e: BaseException) -> bool:
        """The endpoint refused `response_format`: ask again without it (and remember)."""
        if "response_format" not in self.kwargs or not refuses_schema(e):
            return False
        with _NO_SCHEMA_LOCK:
            _NO_SCHEMA.add(self.spec.base_url)
        log.info("%s: the endpoint refused response_format; asking without it", self.node)
        self.kwargs.pop("response_format")
        return True

    def failed(self, e: BaseException, t0: float, bound: float, by_deadline: bool) -> DeadlineReached | None:
        """Record a failed attempt; a timeout the run's deadline set becomes DeadlineReached."""
        seconds = time.perf_counter() - t0
        record = _failed_record(self.node, self.spec, self.messages, e, self.max_tokens, seconds, self.counted)
        self.records.append(record)
        if by_deadline and isinstance(e, CallTimeout):
            return DeadlineReached(f"the run's deadline (deadline_s) came {bound:.1f} s into this attempt")
        return None

    def answered(self, reply: AIMessage, t0: float, past: str | None = None) -> tuple[AIMessage, str]:
        """The attempt's reply on the ledger, its text first cut to what the call asked for (nothing after
        reads more); one that ran past its cap (or `past`: its body was not read) is a reply cut at it."""
        text, cut = kept_reply(reply.content if isinstance(reply.content, str) else _text_of(reply), self.max_tokens)
        past = past or cut
        seconds = time.perf_counter() - t0
        model = self.spec.model or ""
        record = usage_record(self.node, model, self.messages, reply, text, seconds, self.counted)
        if past is not None:
            # charged its cap, estimated, whatever the server said: the call asked for at most that, what came
            # beyond was dropped unread, and a server that ignores max_tokens says what it likes in
            # `completion_tokens` (5,000,000): the totals and cost would count output no one read
            record = {**record, "output_tokens": self.max_tokens, "estimated": True}
            meta = {**(reply.response_metadata or {}), "finish_reason": "length", PAST_CAP: past}
            reply = reply.model_copy(update={"content": text, "response_metadata": meta})
        self.records.append(record)
        return reply, text

    def recovered(self, e: Exception, t0: float, bound: float, by_deadline: bool) -> tuple[AIMessage, str] | None:
        """What a failed attempt still gives: a structured reply cut at its cap is the answer; None
        when the endpoint refused the schema (ask again without it); else the attempt is recorded
        and its failure raised (a timeout the run's deadline set, as DeadlineReached)."""
        cut = cut_structured_reply(e)
        if cut is not None:
            return self.answered(cut, t0)
        too_long = overlong(e)
        if too_long is not None:  # its body passed what the cap allows: a reply cut at its cap, unread
            return self.answered(AIMessage(content=""), t0, past=str(too_long))
        if self.drops_schema(e):
            return None
        deadline = self.failed(e, t0, bound, by_deadline)
        if deadline is not None:
            raise deadline from e
        raise e

    def over_allowance(self, state: RetryCallState) -> bool:
        """A retry costs its prompt again: none is made that the question budget cannot pay for."""
        self.unaffordable = not retry_affordable(self.records, self.allowance)
        return self.unaffordable

    def no_retry(self) -> str:
        """Why a retry that was due was not made: the question budget's numbers, the spent and the next together."""
        prompt = int(self.records[-1].get("input_tokens") or 0) if self.records else 0
        return (
            f"no retry: another attempt would cost its {prompt:,}-token prompt again, and the question budget left "
            f"{self.allowance:,} input tokens for this call's attempts, {spent(self.records):,} of them spent "
            "(raise question_budget to allow retries)"
        )

    def retrying(self, kind: type[Retrying] | type[AsyncRetrying]) -> Any:
        return kind(
            stop=stop_after_attempt(max(0, self.spec.max_retries) + 1) | self.over_allowance,
            retry=retry_if_exception(is_retryable),
            wait=wait_before_retry,
            reraise=True,
        )

    def error(self, e: BaseException) -> LLMError:
        if isinstance(e, DeadlineReached):
            kind, what = "deadline", str(e)
        else:
            kind = "timeout" if is_timeout(e) else "context_length" if is_context_length(e) else "error"
            named = malformed_reply(e)
            what = f"{named} ({type(e).__name__})" if named else f"{type(e).__name__}: {str(e)[:300]}"
        prompt_tokens, context_size = context_numbers(e)
        tried, retries = len(self.records), self.spec.max_retries
        return LLMError(
            f"{self.node}: model call failed ({what}; "
            f"{tried} attempt{'s' if tried != 1 else ''}, max_retries={retries}"
            + (", a timeout is not retried" if kind in ("timeout", "deadline") and retries else "")
            + (f", {self.no_retry()}" if self.unaffordable else "")
            + ")",
            usage=self.records,
            kind=kind,
            prompt_tokens=prompt_tokens,
            context_size=context_size,
        )

    def reply(self, reply: AIMessage, text: str) -> Reply:
        meta = getattr(reply, "response_metadata", None) or {}
        finish = meta.get("finish_reason") or meta.get("stop_reason")
        if finish in ("max_tokens",):  # Anthropic's name for the same thing
            finish = "length"
        if finish == "length":
            self.records[-1]["outcome"] = "truncated"
        done = self.records[-1]
        said = f"answered: {done['output_tokens']} tokens in {done['seconds']:.1f} s"
        if meta.get(PAST_CAP):
            said = f"ran past max_tokens={self.max_tokens} in {done['seconds']:.1f} s: {meta[PAST_CAP]}"
        emit(self.node, "model", f"{self.spec.model} {said}")
        return Reply(text=text, usage=self.records, finish_reason=finish, meta=meta)


class CallOptions(TypedDict, total=False):
    """`call_llm`'s and `acall_llm`'s options besides the model, the node and the messages."""

    max_tokens: Required[int]  # the output cap
    schema: dict | None  # a JSON schema the reply must follow, where the endpoint can constrain it
    deadline_at: float | None  # the run's deadline (a `time.time()`)
    allowance: int | None  # the input tokens the attempts may cost together


def _setup(
    spec: ModelSpec,
    node: str,
    messages: list[BaseMessage],
    options: CallOptions,
    loop: asyncio.AbstractEventLoop | None = None,
) -> _Call:
    """The call's plan; `loop`: the event loop it will be awaited on (None: a sync call)."""
    max_tokens, schema = options["max_tokens"], options.get("schema")
    deadline_at, allowance = options.get("deadline_at"), options.get("allowance")
    if deadline_at is not None and deadline_at <= time.time():
        raise LLMError(f"{node}: the run's deadline passed before this call (deadline_s)", kind="deadline")
    try:  # a missing key or an unknown provider fails here
        model = chat_model(spec) if loop is None else chat_model_for_loop(spec, loop)
    except Exception as e:  # providers raise many types: all end this call
        raise LLMError(f"{node}: model could not be set up ({type(e).__name__}: {str(e)[:300]})") from e
    default_counter()  # loaded here (a file read), not on the event loop when a reply is counted
    counted = counted_prompt(messages)  # here, in the caller's or a worker thread: it may ask the server
    cost = counted if allowance is not None and served_tokens(messages) is not None else None
    if not affordable(cost, allowance):  # never send a call the question budget cannot pay for
        raise Unaffordable(
            f"{node}: not sent: the prompt costs {cost} input tokens by the model's own count and the "
            f"question budget leaves {allowance}",
            allowance,
        )
    kwargs: dict[str, Any] = {"max_tokens": max_tokens}
    if schema is not None and speaks_openai(spec) and spec.base_url not in _NO_SCHEMA:
        kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": node, "schema": schema}}
    emit(node, "model", f"asking {spec.model} (at most {max_tokens} tokens)")
    return _Call(spec, node, messages, max_tokens, deadline_at, model, kwargs, allowance, counted=counted)


def call_llm(spec: ModelSpec, node: str, messages: list[BaseMessage], **options: Unpack[CallOptions]) -> Reply:
    """Invoke the configured model with an output cap; raise LLMError with the usage of every attempt.
    `deadline_at` (a `time.time()`) is the run's deadline: no call starts after it, none runs past it.
    `allowance`: the input tokens the attempts may cost together (a retry it cannot pay for is not made)."""
    call = _setup(spec, node, messages, options)

    def attempt() -> tuple[AIMessage, str]:
        bound, by_deadline = call.bound()
        t0 = time.perf_counter()
        try:
            reply = _within(bound, lambda: call.model.invoke(messages, **call.kwargs))
        except Exception as e:
            answered = call.recovered(e, t0, bound, by_deadline)
            return attempt() if answered is None else answered
        return call.answered(reply, t0)

    try:
        reply, text = call.retrying(Retrying)(attempt)
    except Exception as e:
        raise call.error(e) from e
    return call.reply(reply, text)


async def acall_llm(spec: ModelSpec, node: str, messages: list[BaseMessage], **options: Unpack[CallOptions]) -> Reply:
    """`call_llm` for the event loop: the model is awaited (`ainvoke`), so a run waiting on it holds
    no thread. The same caps, bounds, retries and ledger."""
    call = await asyncio.to_thread(_setup, spec, node, messages, options, asyncio.get_running_loop())

    async def attempt() -> tuple[AIMessage, str]:
        bound, by_deadline = call.bound()
        t0 = time.perf_counter()
        try:
            try:
                reply = await asyncio.wait_for(call.model.ainvoke(messages, **call.kwargs), bound)
            except TimeoutError:
                raise CallTimeout(f"no complete reply within {bound:.1f} s") from None
        except Exception as e:
            answered = call.recovered(e, t0, bound, by_deadline)
            return await attempt() if answered is None else answered
        return call.answered(reply, t0)

    try:
        reply, text = await call.retrying(AsyncRetrying)(attempt)
    except Exception as e:
        raise call.error(e) from e
    return call.reply(reply, text)


# -- usage records --------------------------------------------------------------------------------


def _prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)


def _count(value: object) -> int | None:
    """A provider's token count if it is a sane one: a non-negative integer below 10^8."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value < 0 or value >= 1e8 or int(value) != value:
        return None
    return int(value)


def usage_record(
    node: str,
    model: str,
    messages: list[BaseMessage],
    reply: BaseMessage,
    text: str,
    seconds: float,
    counted: int | None = None,
) -> dict:
    """The provider's numbers when both are sane, else our own count, marked estimated."""
    usage = getattr(reply, "usage_metadata", None) or {}
    given_in, given_out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    counted = counted_prompt(messages) if counted is None else counted
    record = {"node": node, "model": model, "seconds": round(seconds, 4), "outcome": "ok", "counted_tokens": counted}
    if given_in is not None and given_out is not None and (given_in or given_out):
        return {**record, "input_tokens": given_in, "output_tokens": given_out, "estimated": False}
    counter = default_counter()
    return {
        **record,
        "input_tokens": counter.count(_prompt_text(messages)),
        "output_tokens": counter.count(text),
        "estimated": True,
    }


def _failed_record(
    node: str,
    spec: ModelSpec,
    messages: list[BaseMessage],
    error: BaseException,
    max_tokens: int,
    seconds: float,
    counted: int | None = None,
) -> dict:
    prompt_tokens, _ = context_numbers(error)
    timed_out = is_timeout(error)
    return {
        "node": node,
        "model": spec.model or "",
        "input_tokens": prompt_tokens if prompt_tokens is not None else default_counter().count(_prompt_text(messages)),
        "output_tokens": max_tokens if timed_out else 0,
        "seconds": round(seconds, 4),
        "estimated": prompt_tokens is None or timed_out,
        "outcome": "timeout" if timed_out else "context_length" if is_context_length(error) else "error",
        "counted_tokens": counted_prompt(messages) if counted is None else counted,
    }


def _text_of(reply: AIMessage) -> str:
    parts = reply.content if isinstance(reply.content, list) else [reply.content]
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts)
