"""The page of `longqa serve` in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`, which scripts/dev.sh installs) driven by Selenium, against a real `longqa serve`
on a free port of 127.0.0.1 with two tenants' keys and no model (evidence only: no answer is
invented, and none is presented as a model's). A person indexes the bundled sample report from the
page, asks which shipyard built the dredger Marrowdeep, watches the steps, opens a citation and finds
"Marrowdeep" highlighted; a hostile document and a hostile question show their markup as text and
run nothing; the second tenant sees none of the first one's collections or threads, and uploads a file
from the browser into its own collection. Screenshots at
a laptop's and a phone's size go to LONGQA_ARTIFACTS_DIR (default /tmp/longqa-artifacts/page)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.servers import Replica, add_key

pytestmark = [pytest.mark.browser, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = Path(os.environ.get("LONGQA_ARTIFACTS_DIR", "/tmp/longqa-artifacts/page"))
QUESTION = "Which shipyard built the dredger Marrowdeep?"
HOSTILE_Q = 'What does the <img src=x onerror="window.__pwned=4"> checklist say about <b>Quillfeather</b>?'
HOSTILE_DOC = """Quillfeather checklist (a plain text file: its reader keeps markup as the characters it is)

The Quillfeather inspection note reads <script>window.__pwned = 1; alert("script ran")</script> before the list.

The Quillfeather survey photo is <img src="x" onerror="window.__pwned = 2; alert('img ran')"> and the contact
link for the Quillfeather crew is <a href="javascript:window.__pwned = 3">open Quillfeather crew list</a>.

Quillfeather markup such as <b>bold</b> and <iframe src="javascript:alert(5)"></iframe> stays text.
"""
GLOBEX_SECRET = "Globex keeps its ledger of the tug Brindlecombe in vault seven."
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
WAIT_S = 120  # a step of the page (an index run embeds the sample report: tens of seconds on 2 cores)

if not (CHROMIUM and CHROMEDRIVER):
    pytest.skip(
        "no chromium / chromedriver: `bash scripts/dev.sh test` installs Debian's chromium and chromium-driver",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (pip install -e '.[dev]')")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@dataclass
class Deployment:
    url: str
    acme: str
    globex: str
    root: Path


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    base = tmp_path_factory.mktemp("page")
    root = base / "root"
    (root / "acme").mkdir(parents=True)
    (root / "globex").mkdir()
    shutil.copy(ROOT / "samples" / "harbor_annual_report.md", root / "acme" / "harbor_annual_report.md")
    (root / "acme" / "hostile.txt").write_text(HOSTILE_DOC, "utf-8")
    (root / "globex" / "ledger.md").write_text(f"# Ledger\n\n{GLOBEX_SECRET}\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_"))}
    env.update(
        {
            "LONGQA_KEYS_FILE": str(base / "keys.json"),
            "LONGQA_DOCUMENTS_ROOT": str(root),
            "LONGQA_TOKENIZER": "wordpiece",
            "LONGQA_ONNX_DIR": os.environ.get("LONGQA_ONNX_DIR", ""),
            "LONGQA_WARM": "0",
        }
    )  # no LONGQA_MODEL: evidence only
    acme = add_key(env, "--tenant", "acme", "--grant", "ask,index", "--collections", "acme-lib", "--documents", "acme")
    globex = add_key(
        env, "--tenant", "globex", "--grant", "ask,index", "--collections", "globex-lib", "--documents", "globex"
    )
    replica = Replica("page", base / "home", env).start()
    try:
        url = replica.url
        headers = {"Authorization": f"Bearer {globex}"}
        r = httpx.post(
            url + "/index", json={"collection": "globex-lib", "documents": ["globex"]}, headers=headers, timeout=300
        )
        assert r.status_code == 200 and r.json()["error"] is None, r.text
        body = {"question": "Where is the ledger of the tug Brindlecombe?", "collection": "globex-lib"}
        r = httpx.post(url + "/ask", json={**body, "thread_id": "globex-thread-1"}, headers=headers, timeout=120)
        assert r.status_code == 200, r.text
        yield Deployment(url, acme, globex, root)
    finally:
        replica.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1366,900"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver, what, timeout: float = WAIT_S):
    return WebDriverWait(driver, timeout).until(lambda d: what(d))


def _sign_in(driver, url: str, key: str) -> None:
    driver.get(url + "/")
    driver.find_element(By.ID, "key").send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    _wait(driver, lambda d: "Tenant" in d.find_element(By.ID, "who").text)


def _shot(driver, name: str, width: int, height: int) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(width, height)
    path = ARTIFACTS / f"{name}-{width}x{height}.png"
    assert driver.save_screenshot(str(path)), path
    return path


def _index_from_page(driver) -> None:
    driver.find_element(By.CSS_SELECTOR, "#index-panel summary").click()
    field = driver.find_element(By.ID, "index-collection")
    field.send_keys("acme-lib")
    _wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#files input[type=checkbox]")) == 2)
    for box in driver.find_elements(By.CSS_SELECTOR, "#files input[type=checkbox]"):
        if not box.is_selected():
            box.click()
    driver.find_element(By.ID, "index-start").click()
    _wait(driver, lambda d: "version" in d.find_element(By.ID, "index-status").text)
    rows = driver.find_element(By.ID, "index-progress").text
    assert "acme/harbor_annual_report.md: indexed (new)" in rows, rows
    assert "acme/hostile.txt: indexed (new)" in rows, rows


def _ask(driver, question: str) -> object:
    turns_before = len(driver.find_elements(By.CSS_SELECTOR, "#turns > li"))
    box = driver.find_element(By.ID, "question")
    box.send_keys(question)
    driver.find_element(By.ID, "ask").click()
    _wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#turns > li")) == turns_before + 1)
    turn = driver.find_elements(By.CSS_SELECTOR, "#turns > li")[-1]
    _wait(driver, lambda d: turn.find_elements(By.CSS_SELECTOR, ".answer h3, .answer .error"))
    return turn


def _open_citation_with(driver, turn, word: str) -> str:
    for item in turn.find_elements(By.CSS_SELECTOR, ".citations li"):
        if word in item.text:
            button = item.find_element(By.CSS_SELECTOR, "button.cite")
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
            button.click()
            _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#doc-text mark"))
            return driver.find_element(By.CSS_SELECTOR, "#doc-text mark").text
    pytest.fail(f"no citation holding {word!r}: {turn.text[:2000]}")


def _no_script_ran(driver) -> None:
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 - raises when no dialog opened
    assert len(driver.find_elements(By.CSS_SELECTOR, "script")) == 1  # app.js alone
    assert not driver.find_elements(By.CSS_SELECTOR, "body img, body iframe, a[href^='javascript']")
    violations = [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]
    assert not violations, violations  # the page keeps its own policy (no inline script or style)


def test_a_person_indexes_asks_and_opens_the_cited_span(deployment: Deployment, browser) -> None:
    _sign_in(browser, deployment.url, deployment.acme)
    _index_from_page(browser)
    _wait(browser, lambda d: "acme-lib" in d.find_element(By.ID, "collection").text)
    turn = _ask(browser, QUESTION)
    steps = turn.find_element(By.CSS_SELECTOR, ".steps").text
    for step in ("Opened the documents", "Analysed the question", "Planned the search", "Retrieved passages"):
        assert step in steps, steps
    assert "Evidence" in turn.find_element(By.CSS_SELECTOR, ".answer h3").text  # no model: evidence only
    assert "No model is configured" in turn.text
    _shot(browser, "answer", 1366, 900)
    marked = _open_citation_with(browser, turn, "Marrowdeep")
    assert "Marrowdeep" in marked
    source = browser.find_element(By.ID, "doc-source").text
    assert "acme/harbor_annual_report.md" in source and "section:" in source, source
    _shot(browser, "citation", 1366, 900)
    _shot(browser, "citation", 390, 844)
    browser.find_element(By.ID, "doc-close").click()
    follow = _ask(browser, "And when was the dredger Marrowdeep built?")  # a follow-up: the same thread
    assert "Marrowdeep" in follow.text
    _wait(browser, lambda d: "2 turns" in d.find_element(By.ID, "threads").text)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#threads button.thread")) == 1
    _shot(browser, "conversation", 390, 844)
    _no_script_ran(browser)


def test_hostile_text_is_shown_as_text_and_runs_nothing(deployment: Deployment, browser) -> None:
    _sign_in(browser, deployment.url, deployment.acme)
    _wait(browser, lambda d: "acme-lib" in d.find_element(By.ID, "collection").text)
    turn = _ask(browser, HOSTILE_Q)
    assert HOSTILE_Q in turn.find_element(By.CSS_SELECTOR, ".question").text  # the question's markup, as text
    marked = _open_citation_with(browser, turn, "Quillfeather")
    shown = browser.find_element(By.ID, "doc-text").text
    assert "<script>window.__pwned = 1" in shown and 'onerror="window.__pwned = 2' in shown, shown
    assert '<a href="javascript:window.__pwned = 3">' in shown and "<b>bold</b>" in shown, shown
    assert "Quillfeather" in marked
    _shot(browser, "hostile", 1366, 900)
    _no_script_ran(browser)


def test_a_second_tenant_sees_none_of_the_first_ones_collections_or_threads(deployment: Deployment, browser) -> None:
    _sign_in(browser, deployment.url, deployment.globex)
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#threads li"))
    assert browser.find_element(By.ID, "collection").text.split("\n") == ["globex-lib (1 document)"]
    threads = browser.find_element(By.ID, "threads").text
    assert "Brindlecombe" in threads and "Marrowdeep" not in threads and "Quillfeather" not in threads, threads
    assert browser.find_element(By.ID, "index-panel").get_attribute("hidden") is None
    files = browser.find_element(By.ID, "files").get_attribute("textContent")
    assert "globex/ledger.md" in files and "acme/" not in files, files
    page = browser.page_source
    assert "acme-lib" not in page and "harbor_annual_report" not in page
    _shot(browser, "second-tenant", 1366, 900)
    _shot(browser, "second-tenant", 390, 844)  # and the upload below is done at a phone's size
    upload = deployment.root.parent / "tug roster.txt"  # outside the documents root: sent from the browser
    upload.write_text("The tug Brindlecombe is crewed by Ansel Varrow and two deckhands.\n", "utf-8")
    browser.find_element(By.CSS_SELECTOR, "#index-panel summary").click()
    browser.find_element(By.ID, "index-collection").send_keys("globex-lib")
    browser.find_element(By.ID, "upload-files").send_keys(str(upload))
    browser.find_element(By.ID, "upload-start").click()
    _wait(browser, lambda d: "Uploads finished" in d.find_element(By.ID, "index-status").text)
    rows = browser.find_element(By.ID, "index-progress").text
    assert "tug roster.txt: indexed as upload/tug roster.txt (new)" in rows, rows
    _wait(browser, lambda d: "globex-lib (2 documents)" in d.find_element(By.ID, "collection").text)
    _shot(browser, "upload", 390, 844)
    # the first tenant's thread, asked for by id from this tab, is not found
    status = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/page/api/threads/' + arguments[0], {headers: {Authorization: 'Bearer ' + arguments[1]}})"
        ".then(r => done(r.status));",
        "globex-thread-1",
        deployment.acme,
    )
    assert status == 404


@pytest.fixture(scope="module")
def scripted(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """A second server over the same documents with the scripted model (an offline test model, not a
    language model): its answers are labelled as the scripted model's."""
    base = tmp_path_factory.mktemp("page-scripted")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_"))}
    env.update(
        {
            "LONGQA_KEYS_FILE": str(base / "keys.json"),
            "LONGQA_DOCUMENTS_ROOT": str(deployment.root),
            "LONGQA_TOKENIZER": "wordpiece",
            "LONGQA_ONNX_DIR": os.environ.get("LONGQA_ONNX_DIR", ""),
            "LONGQA_WARM": "0",
            "LONGQA_MODEL": "scripted",
        }
    )
    acme = add_key(env, "--tenant", "acme", "--grant", "ask", "--collections", "acme-lib", "--documents", "acme")
    admin = add_key(env, "--tenant", "ops", "--grant", "admin", "--collections", "*", "--documents", "*")
    replica = Replica("page-scripted", base / "home", env).start()
    try:
        body = {"collection": "acme-lib", "documents": ["acme/harbor_annual_report.md"]}
        r = httpx.post(replica.url + "/index", json=body, headers={"Authorization": f"Bearer {admin}"}, timeout=300)
        assert r.status_code == 200 and r.json()["error"] is None, r.text
        yield Deployment(replica.url, acme, admin, deployment.root)
    finally:
        replica.stop()


def test_with_the_scripted_model_the_answer_is_labelled_and_its_source_opens(scripted: Deployment, browser) -> None:
    _sign_in(browser, scripted.url, scripted.acme)
    assert browser.find_element(By.ID, "index-panel").get_attribute("hidden") is not None  # ask only: no indexing
    turn = _ask(browser, QUESTION)
    heading = turn.find_element(By.CSS_SELECTOR, ".answer h3").text
    assert heading.startswith("Answer (scripted") and "not a real LLM" in heading, heading  # never a model's
    assert "Holloway & Venn" in turn.find_element(By.CSS_SELECTOR, ".answer-text").text
    steps = turn.find_element(By.CSS_SELECTOR, ".steps").text
    assert "Wrote the answer" in steps and "Checked the answer against its passages" in steps, steps
    assert "Marrowdeep" in _open_citation_with(browser, turn, "Marrowdeep")
    _shot(browser, "scripted-answer", 1366, 900)


CONTRAST = """
const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
const linear = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
const lum = ([r, g, b]) => [r, g, b].map(linear)
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const background = (e) => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
  if (c.length < 4 || c[3] > 0) return c.slice(0, 3); } return [255, 255, 255]; };
return Array.from(document.querySelectorAll(arguments[0])).filter((e) => e.offsetParent && e.textContent.trim())
  .map((e) => { const a = lum(rgb(getComputedStyle(e).color)), b = lum(background(e));
    return [e.tagName + "." + e.className, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]; });
"""


def test_the_page_is_usable_by_keyboard(deployment: Deployment, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _sign_in(browser, deployment.url, deployment.acme)
    unlabelled = browser.execute_script(
        "return Array.from(document.querySelectorAll('input, select, textarea'))"
        ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id);"
    )
    assert unlabelled == []
    browser.get(deployment.url + "/")  # a fresh load (the key stays for the tab): focus starts at the top
    _wait(browser, lambda d: "Tenant" in d.find_element(By.ID, "who").text)
    order, outlines = [], []
    for _ in range(8):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        active = browser.switch_to.active_element
        order.append(active.get_attribute("id") or active.text)
        outlines.append(active.value_of_css_property("outline-style"))
    assert order[:7] == [
        "Skip to the question",
        "key",
        "Use this key",
        "forget-key",
        "collection",
        "new-thread",
        order[6],  # the first earlier thread, when there is one; else the index panel
    ], order
    assert all(style != "none" for style in outlines), list(zip(order, outlines, strict=True))  # focus is visible
    browser.find_element(By.ID, "question").send_keys(QUESTION)
    ActionChains(browser).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()  # asks
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#turns .answer h3"))
    texts = "label, button, .hint, .who, .step, .question, .answer p, .citations li, h1, h2, h3, summary"
    ratios = browser.execute_script(CONTRAST, texts)
    assert len(ratios) > 20 and all(ratio >= 4.5 for _, ratio in ratios), sorted(ratios, key=lambda r: r[1])[:5]
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#turns .answer h3"))
