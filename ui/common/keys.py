"""Every ``st.session_state`` key the screens use, declared once: what each holds and who writes it.

A key that several places read is a contract between them; held here, a renamed key cannot leave a reader behind.
A family of keys (one per run, per snippet, per form) is a function of what tells its members apart, built by
``_family`` from its pattern. Widget keys that nothing reads through ``st.session_state`` stay where their widget is
drawn. ``tests/ui/test_ui_keys.py`` fails on a bare string key into ``st.session_state`` anywhere else in ``ui/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _family(pattern: str) -> Callable[..., str]:
    """The keys of a family: ``pattern`` with each ``{}`` filled by an argument, in order."""
    return pattern.format


# -- the whole app (ui/common) ---------------------------------------------------------------------------------------

LLM_OVERRIDE = "llm_override"  # an LLM that replaces the configured one; only tests write it
RETRIEVER_OVERRIDE = "retriever_override"  # a retriever that replaces the corpora's; only tests write it
# this session's endpoint, written by state.endpoint_settings and Settings: {"embedded": bool, "base_url": str,
# "model": str, "provider": str, "timeout": float, "context_window": int, "reasoning_effort": str | None}; never a key
ENDPOINT = "settings.endpoint"
SESSION_KEY = "settings.session_key"  # a key typed on Settings for another endpoint: this session's memory only
KNOB_DEFAULTS = "settings.knobs"  # {method name: {knob: value}}, the user's defaults, written by Settings' knobs
CORPORA = "settings.corpora"  # enabled corpus paths, None for the default; written by Settings' corpus checkboxes
CORPUS_PATHS = "settings.corpus_paths"  # corpora the user pointed at besides the default ones (common/corpora)
INDEX_BUILD = "settings.index_build"  # the id of the index build Settings follows (started here, or found running)
NEW_CORPUS = "settings.new_corpus"  # the folder typed in Settings › Corpora (its text input)
CORPUS_PROBLEM = "settings.corpus_problem"  # why the typed folder was refused, shown under it
NAMED_CORPUS = "settings.named_corpus"  # the paper's corpus picked in Settings › Corpora (its select box)
NAMED_PLAN = "settings.named_plan"  # (name, its plan's lines, fits?) once checked, shown before its download starts

OWNER_SIGNED_IN = "access.owner"  # True once the owner typed the passcode in this browser session (common/access)
BROWSER_SESSION = "access.session"  # a random id for this browser session (common/access)
MY_RUNS = "access.my_runs"  # ids of the runs this browser session started (common/access)
ACCESS_PROBLEM = "access.problem"  # why the last passcode was refused
PASSCODE = "access.passcode"  # the owner's passcode as typed (its text input), cleared once read

ANNOTATOR = "annotate.annotator"  # the name this session labels under (common/annotator)
ANNOTATOR_PROBLEM = "annotate.name_problem"  # why the typed name was refused
annotator_input = _family("{}.name_input")  # (form): the name typed in the form drawn under ``form``

kept = _family("kept:{}")  # (widget): a kept widget's copy (``state.kept``), brought back after another page
knob_widget = _family("{}.{}.{}")  # (form, method, knob): one knob's widget in a form's knob inputs (common/knobs)
knob_widgets_of = _family("{}.{}.")  # (form, method): the prefix of every knob widget of a method in a form


def knob_copy(widget: str, default: Any) -> str:
    """A knob's value kept across pages, per the starting point (Settings' default) it was changed from."""
    return kept(f"{widget}:{json.dumps(default, default=str)}")


# the prefix of each page's knob widgets
ASK_KNOBS, COMPARE_KNOBS, BENCH_KNOBS, SETTINGS_KNOBS = "ask.knobs", "compare.knobs", "bench.knobs", "settings.knobs"
# the prefix of each page's question form (runs/question_form)
ASK_FORM, COMPARE_FORM = "ask", "compare"
form_options = _family("{}.options")  # (form): the ids of the form's option rows, in order
form_next_option = _family("{}.next")  # (form): the id the form's next new option row gets
form_option = _family("{}.opt.{}")  # (form, uid): one option row's text (a kept widget)
form_case = _family("{}.case")  # (form): the teaching case the form started from (a kept selectbox)
form_text = _family("{}.text")  # (form): the question's text (a kept text area)
form_format = _family("{}.format")  # (form): multiple choice or free text (a kept radio)

trace_label = _family("labels-{}-{}-{}")  # (form, run id, snippet id): my grade on a trace's labels tab
evidence_on = _family(
    "{}.evidence"
)  # (run view key): whether a run's claims and their evidence are shown (runs/evidence_view)
problem_of = _family("{}.problem")  # (grade widget): why its value was not saved, shown under it once

# -- Explore, Compare, History ---------------------------------------------------------------------------------------

ASK_RUN = "ask.run"  # the id of the run Explore shows in this tab
COMPARE_RUNS = "compare.runs"  # the ids of the runs Compare shows in this tab
HISTORY_OPEN = "history.open"  # the id of the run History shows (its selectbox), put in the URL
HISTORY_CONFIRM = "history.confirm_delete"  # the run id whose deletion waits for "Yes, delete it"
HISTORY_UPLOAD = "history.files.upload"  # the run file being imported (its file uploader)
HISTORY_IMPORTED = "history.files.imported"  # the upload already imported, so a rerun does not import it again
HISTORY_FILES_SAID = "history.files.message"  # (kind, message) left by the last import

# -- Annotate --------------------------------------------------------------------------------------------------------

ANNOTATE_VIEW = "annotate.view"  # the view chosen: Judge, Agreement, Metrics, Export and import
ANNOTATE_POS = "annotate.pos"  # {question id: pool id shown}, written by the judge's buttons
ANNOTATE_ADVANCE = "annotate.advance"  # the "move on after a grade" toggle
ANNOTATE_PROBLEM = "annotate.problem"  # why the last grade was not saved
ANNOTATE_SAVED = "annotate.saved"  # {question id: (passage number, grade)} last saved, said under the buttons
ANNOTATE_RELEVANT = "annotate.relevant"  # the grade that counts as relevant (Metrics' input, read by Agreement too)
ADJUDICATION_PAGE = "annotate.adjudication_page"  # the first disputed snippet of the page shown (its selectbox)
annotate_note = _family("annotate.note.{}.{}")  # (question id, pool id): the note beside one snippet's grades
final_grade = _family("annotate.final.{}.{}")  # (question id, pool id): the adjudicated grade of a disputed snippet
ANNOTATE_MODE = "annotate.mode"  # what is judged: "relevance" (a snippet for its question) or "attribution"
ATTRIBUTION_PROBLEM = "annotate.attribution.problem"  # why the last attribution label was not saved
attribution_grade = _family("annotate.attr.{}.{}.{}")  # (run id, claim id, snippet id): one pair's radio
attribution_note = _family("annotate.attrnote.{}.{}.{}")  # (run id, claim id, snippet id): the note beside it

# -- Benchmark -------------------------------------------------------------------------------------------------------

BENCH_JOB = "bench.job"  # this session's benchmark job id
BENCH_SEEN = "bench.seen"  # (runs done, when) at the last redraw of the whole page
BENCH_CORPUS_CHECK = "bench.corpus_check"  # (corpora, question keys) -> TopicFit, the last corpora check
BENCH_CELL = "bench.cell"  # the summary line whose questions are shown, as "arm|dataset"
BENCH_CELLS = "bench.cells"  # the summary's lines in table order, so a selected row names its line
BENCH_SUMMARY = "bench.summary"  # the summary table (its selection)
BENCH_DATASETS = "bench.datasets"  # the datasets chosen (a kept multiselect)
BENCH_DATASETS_OF = "bench.datasets_of"  # the benchmark those datasets were chosen from
BENCH_METHODS = "bench.methods"  # the methods chosen (a kept multiselect)
BENCH_PRESETS = "bench.presets"  # the presets chosen (a kept multiselect)
BENCH_GROUP = "bench.group"  # a group of presets clicked, added to the presets then cleared

# -- Workshop --------------------------------------------------------------------------------------------------------

WORKSHOP_PICKS = "workshop.picks"  # {run id: option} this solo viewer predicted
WORKSHOP_TRUST = "workshop.trust"  # snippet ids this solo viewer trusts
WORKSHOP_CARRIER = "workshop.carrier"  # the snippet id this solo viewer predicts carried the answer
WORKSHOP_WHATIF = "workshop.whatif"  # the run id of the what-if re-run this tab shows
WHATIF_PANEL = "workshop.whatif"  # the prefix of the what-if panel's widgets (its .drop, .pin, .go)
WORKSHOP_PLAYER = "workshop.player"  # the solo replay's Player (step, playing, speed)
WORKSHOP_CONTROLS = "workshop"  # the prefix of the solo replay's controls and predictions
workshop_revealed = _family("workshop.revealed.{}")  # (run ids joined by ","): the solo reveal was shown
ROOM_PRESENTING = "room.presenting"  # {room code: the presenter's token}, in this browser session only
ROOM_SHOWN = "room.shown"  # (code, "presenter") once this session's presenter screen has taken up the room's step
ROOM_JOIN_CODE = "room.join.code"  # the join form's room code
ROOM_JOIN_NAME = "room.join.name"  # the join form's name
ROOM_JOIN_ERROR = "room.join.error"  # why joining failed
room_controls = _family("room.{}")  # (code): the prefix of a room's replay controls and a participant's predictions
room_player = _family("room.{}.player")  # (code): the presenter's Player of a room
room_revealed = _family("room.{}.revealed")  # (code): a participant saw the reveal; predictions stay closed
room_earlier = _family("room.{}.earlier")  # (code): a participant shows the earlier steps too (its toggle)
replay_jump = _family("{}.jump")  # (controls): the replay's "jump to a stage" choice, cleared once taken
replay_speed = _family("{}.speed")  # (controls): the replay's speed (its segmented control)
prediction = _family("{}.pick.{}")  # (controls, run id): the option picked for one method's run (its radio)
# (controls): the snippets marked trusted (its pills): one widget for every step, so a tap made on a step the page
# has just redrawn past reaches a widget the server still draws, and the next tap keeps it
trusted = _family("{}.trust")
carrier = _family("{}.carrier.{}")  # (controls, step): the snippet predicted to carry the answer (its pills)

# -- Settings --------------------------------------------------------------------------------------------------------

PROVIDER = "settings.provider"  # the provider picked (its selectbox)
BASE_URL = "settings.base_url"  # the endpoint URL typed (its text input)
LISTED_MODELS = "settings.models"  # {base URL: [model names]} the endpoint listed
PRICES_SAID = "prices.said"  # (kind, message) left by the last price save or removal, shown once
PRICES_MODEL = "prices.model"  # the model whose price is edited (its selectbox)
PRICES_FOLLOWED = "prices.followed"  # the configured model the price picker last moved to


def price_inputs(model: str) -> tuple[str, str, str]:
    """One model's price inputs: per million input tokens, per million output tokens, its currency."""
    return f"prices.input.{model}", f"prices.output.{model}", f"prices.currency.{model}"
