"""Cheap checks of an answer against itself: does the chosen option agree with the reasoning written for it?

A small model can pick one letter and argue for another (its reasoning concludes for B's drug, its answer field says
A), or answer "no" under a reasoning that says yes. The check reads the reasoning sentence by sentence:

- Lettered options: which options each sentence names, by letter ("option B", "(B)", "answer is B") or by the
  option's own words, and whether it names them for or against ("X is not appropriate", "rather than X"; in an
  "all of the following except" question the other way round). The sentence that concludes (one that says
  "therefore", "the most appropriate", "first-line" ..., else the last sentence naming an option for, or the
  first one when the answer was written before its reasoning) must name the chosen option; if it names only
  others, the answer is flagged.
- Yes/no(/maybe) options: the sentence that restates the question (the most of its words) says yes or no by its
  negations ("not", "cannot", "insufficient" for "sufficient"); a hedge ("more research is needed") says
  neither. A clear stance against the chosen yes or no is flagged.

It is a prompt to read the reasoning, not a verdict. ``docs/consistency.md`` counts what it flags on recorded runs
against a reader's judgement (``python -m benchmarks.consistency_check``).
"""

from __future__ import annotations

import re
from itertools import pairwise

from pydantic import BaseModel

from core.engine.trace import Answer

_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "without",
        "no",
        "not",
        "only",
        "its",
        "their",
    }
)
MIN_WORDS_MATCHED = 0.75  # the share of an option's content words a sentence must use to name it by its words
DISTINCTIVE_CHARS = 7  # a word of an option at least this long, in no other option, names it on its own
PHRASE_WORDS = 4  # so do this many of its words in a row, one of them its own ("review in 24 hours")
DETERMINER_WORDS = 2  # 'no' denies a mention only this close before it ("no antibiotics"), not the whole clause
STEM_CHARS = 6  # yes/no questions: words match on their first characters ("improving" ~ "improve")
MIN_RESTATED = 0.5  # the share of the question's words a clause must repeat to count as restating it

_NEGATION = re.compile(
    r"\b(?:not|never|cannot|can't|nor|neither|none|unlikely|inappropriate|incorrect|wrong|"
    r"outdated|unnecessary|contraindicated|avoid(?:ed)?|against|less likely|ruled out|\w+n't)\b",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\b(?:rather than|instead of|preferred over|over)\s*$", re.IGNORECASE)  # denies what follows
# what ends a clause: a negation in one does not reach a mention in the next ("X is used, but Y is not")
_CLAUSE = re.compile(
    r"[;:]|\b(?:but|however|whereas|while|although|though|because|since|which|when|if|unless|"
    r"as it|due to|so|therefore|thus)\b",
    re.IGNORECASE,
)
_ANSWER_LINE = re.compile(
    r"\b(?:correct answer|the answer|answer is|option [A-J] is (?:the )?correct)\b", re.IGNORECASE
)
_CONCLUDES = re.compile(
    r"\b(?:therefore|thus|hence|so the|correct answer|the answer is|answer is|most appropriate|"
    r"most likely|best|first[- ]line|treatment of choice|preferred|recommended|should be|"
    r"is indicated|optimal)\b",
    re.IGNORECASE,
)
_INVERTED = re.compile(r"\b(?:except|not true|false|incorrect|least likely|least appropriate)\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:may or may not|unclear|uncertain|controversial|more research|further research|"
    r"further stud(?:y|ies)|not (?:fully|yet) (?:understood|known|established)|remains to be|debated|"
    r"inconclusive|mixed)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(\"“])")
_YES_NO = {"yes", "no", "maybe"}


class Mismatch(BaseModel):
    chosen: str
    argued: str | None  # the option the reasoning concludes for; None when it only argues against the chosen one
    named: list[str]  # every option the reasoning names, in order of first mention
    because: str = ""  # the sentence that concludes for another option, or rejects the chosen one

    def message(self, options: dict[str, str]) -> str:
        quote = f" “{self.because}”" if self.because else ""
        against = (
            f"argues for {self.argued} (“{options.get(self.argued, '')}”)"
            if self.argued
            else f"argues against it (“{options.get(self.chosen, '')}”)"
        )
        return (
            f"The answer is {self.chosen}, but its reasoning {against}:{quote} Read the reasoning before trusting "
            "the letter."
        )


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


# -- lettered options -----------------------------------------------------------------------------------------


def _letter_mentions(letter: str, text: str) -> list[tuple[int, int]]:
    patterns = (
        rf"\b(?:option|answer|choice)\s*(?:is\s*)?\(?{letter}\)?(?![\w-])",
        rf"\({letter}\)",
        rf"(?<![\w-]){letter}[.:)](?=\s|$)",
    )
    return [m.span() for p in patterns for m in re.finditer(p, text)]


def _text_mention(option: str, others: list[str], text: str, stem: str) -> tuple[int, int] | None:
    """Where ``text`` uses the option's own words: the whole option; a word no other option and not the question
    has (a drug's name, say); a few of its words in a row, one of them its own; or most of its content words, one
    of them its own."""
    whole = option.strip(" .")
    if len(whole) <= 5 and whole.isupper():  # an abbreviation (ALL, CML) counts only as a word of its own, in capitals
        found = re.search(rf"(?<![\w-]){re.escape(whole)}(?![\w-])", text)
    else:
        found = re.search(re.escape(whole.lower()), text.lower())
    if found:
        return found.span()
    asked = set(_words(stem))
    wanted, used = set(_words(option)) - asked, set(_words(text))
    own = wanted - {w for other in others for w in _words(other)}
    hits = {w for w in own if len(w) >= DISTINCTIVE_CHARS} & used
    if not hits and len(wanted) >= 2 and len(wanted & used) / len(wanted) >= MIN_WORDS_MATCHED and own & used:
        hits = wanted & used
    spans = [m.span() for w in hits for m in [re.search(rf"\b{w}\b", text.lower())] if m]
    tokens = re.findall(r"[a-z0-9]+", option.lower())
    for i in range(len(tokens) - PHRASE_WORDS + 1):
        phrase = tokens[i : i + PHRASE_WORDS]
        if own & set(phrase) and (m := re.search(r"\W+".join(map(re.escape, phrase)), text.lower())):
            spans.append(m.span())
    return min(spans) if spans else None


def _rivals(letter: str, options: dict[str, str]) -> list[str]:
    """The options whose words make a word of this one not its own: all others but those that hold all of its
    words and more ("loss of taste and lacrimation" has 'lacrimation' of its own beside "... and decreased
    salivation", which repeats it)."""
    mine = set(_words(options[letter]))
    return [o for k, o in options.items() if k != letter and not mine < set(_words(o))]


def _clause(sentence: str, span: tuple[int, int]) -> tuple[int, int]:
    cuts = [m.start() for m in _CLAUSE.finditer(sentence)]
    return max([c for c in cuts if c <= span[0]], default=0), min(
        [c for c in cuts if c >= span[1]], default=len(sentence)
    )


def _negated(sentence: str, span: tuple[int, int], option: str, negates: bool = True) -> bool:
    """Whether the mention's clause denies it ("X is not typically used", "no X", "rather than X"). The option's
    own words do not count ("Informed consent is not needed" names that option, for it), and denying what an option
    that opens with a denial denies is not against it ("not an indication for antibiotic prophylaxis" and "No antibiotic
    prophylaxis")."""
    if not negates:
        return False
    own = set(re.findall(r"[a-z']+", option.lower()))
    start, end = _clause(sentence, span)
    before, after = sentence[start : span[0]], sentence[span[1] : end]
    denied = (
        any(m.group().lower() not in own for m in _NEGATION.finditer(before + " " + after))
        or bool(_INSTEAD.search(before.split(",")[-1]))
        or ("no" not in own and "no" in before.lower().split()[-DETERMINER_WORDS:])
    )
    denial = bool(re.match(r"\s*(?:no|not|do not|don't|avoid|never|none)\b", option, re.IGNORECASE))
    named = sentence[span[0] : span[1]]
    quoted = bool(_NEGATION.search(named) or re.search(r"\bno\b", named, re.IGNORECASE))
    return denied and not (denial and not quoted)


def _stances(sentence: str, options: dict[str, str], stem: str, inverted: bool) -> dict[str, tuple[bool, int]]:
    """Option letter -> whether this sentence names it for (True) or against (False), and how fully: the option's
    words it uses (all of them for its letter or its whole text)."""
    by_letter = {k: _letter_mentions(re.escape(k), sentence) for k in options}
    by_words = {k: at for k, o in options.items() if (at := _text_mention(o, _rivals(k, options), sentence, stem))}
    words = {k: set(_words(o)) for k, o in options.items()}
    # of nested options named by their words, the fullest: "paralysis, loss of taste and lacrimation" names C, not A
    by_words = {k: at for k, at in by_words.items() if not any(words[k] < words[j] for j in by_words)}
    used, asked = set(_words(sentence)), set(_words(stem))
    # a question that itself denies ("what might make a patient not able to use an inhaler?") is restated with its
    # denial: there a negation says nothing about an option
    negates = inverted or not _NEGATION.search(sentences(stem)[-1] if stem.strip() else "")
    found = {}
    for letter, option in options.items():
        # an option named by its letter ("the answer is D") is named for it even in an "all ... except" question
        spans = [(span, False) for span in by_letter[letter]] + (
            [(by_words[letter], inverted)] if letter in by_words else []
        )
        # in an "all ... except" question only a denial names an option for it: "Woods manoeuvre is not performed"
        # does, the bare "Woods manoeuvre." says nothing
        spans = [(span, flip) for span, flip in spans if not flip or _negated(sentence, span, option, negates)]
        if spans:  # named against anywhere in the sentence ("Option A: amoxicillin ... is not recommended")
            full = bool(by_letter[letter]) or option.strip(" .").lower() in sentence.lower()
            wanted = words[letter] - asked or words[letter]
            found[letter] = (
                not any(_negated(sentence, span, option, negates) != flip for span, flip in spans),
                len(wanted) if full else len(wanted & used),
            )
    return found


def named_options(rationale: str, options: dict[str, str], question: str = "") -> list[str]:
    """Option letters the rationale names, for or against, ordered by where it first names each; words it repeats
    from the question (the vignette's drug, say) do not name an option."""
    first: dict[str, int] = {}
    for letter, option in options.items():
        places = [s for s, _ in _letter_mentions(re.escape(letter), rationale)]
        at = _text_mention(option, _rivals(letter, options), rationale, question)
        places += [at[0]] if at else []
        if places:
            first[letter] = min(places)
    return sorted(first, key=first.get)


def _read(answer: Answer, options: dict[str, str], question: str) -> tuple[list[tuple[list[str], str]], dict[str, str]]:
    """Each sentence that argues for options (those options, the sentence), and the options the reasoning rejects
    (with the sentence that does): named against at least as fully as it is ever named for ("intravenous insulin"
    does not argue for "subcutaneous insulin and discharge" once "subcutaneous insulin is not recommended")."""
    stem = sentences(question)[-1] if question.strip() else ""
    inverted = bool(_INVERTED.search(stem))
    read = [(sentence, _stances(sentence, options, question, inverted)) for sentence in sentences(answer.rationale)]
    rejected = {}
    for letter in options:
        against = [(n, s) for s, found in read if letter in found and not found[letter][0] for n in [found[letter][1]]]
        backing = [found[letter][1] for _, found in read if letter in found and found[letter][0]]
        if against and max(against)[0] >= max(backing, default=0):
            rejected[letter] = max(against)[1]
    arguing = []
    for sentence, found in read:
        letters = [k for k, (backs, _) in found.items() if backs and k not in rejected]
        if letters:
            arguing.append((letters, sentence))
    return arguing, rejected


def _concluding(answer: Answer, arguing: list[tuple[list[str], str]]) -> tuple[list[str], str] | None:
    """The options the reasoning concludes for, and the sentence that does: the first sentence that says so
    ("therefore", "the most appropriate" ...; for an answer written before its reasoning, else the first that
    names an option for it) or the last one (the papers' order). Reasoning written first that names the chosen
    option for it somewhere, and concludes nothing in words, is not held to its last mention."""
    marked = [a for a in arguing if _CONCLUDES.search(a[1])]
    if answer.answer_format == "answer first":
        return (marked or arguing or [None])[0]
    if marked:
        return marked[-1]
    if not arguing or any(answer.choice in argued for argued, _ in arguing):
        return None
    return arguing[-1]


# -- yes / no questions ---------------------------------------------------------------------------------------


_AUXILIARY = frozenset(
    {
        "can",
        "could",
        "do",
        "does",
        "did",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "has",
        "have",
        "had",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "there",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
    }
)


def _stem(word: str) -> str:
    """A word's first characters, a plural's 's' dropped first ("LTRs" restates "LTR", "improving" "improve")."""
    return (word[:-1] if len(word) > 3 and word.endswith("s") else word)[:STEM_CHARS]


def _stems(text: str) -> list[str]:
    """A question's content words as stems; its auxiliaries (the 'can' of 'can X replace Y') restate nothing."""
    return [_stem(w) for w in _words(text) if w not in _AUXILIARY and (len(w) > 1 or w.isdigit())]


def _stance(sentence: str, asked: set[str]) -> tuple[int, str | None]:
    """How many of the question's words the sentence's fullest clause repeats, and whether that clause says yes or
    no by its negations ("X is a marker, but not a direct one" says yes); None for a hedge, or for clauses that
    restate as much and disagree."""
    cuts = [0, *(m.start() for m in _CLAUSE.finditer(sentence)), len(sentence)]
    clauses = [_restated(sentence[a:b], asked) for a, b in pairwise(cuts)]
    most = max(len(words) for words, _ in clauses)
    stances = {"no" if denied else "yes" for words, denied in clauses if len(words) == most}
    if _HEDGE.search(sentence) or len(stances) != 1:
        return most, None
    return most, stances.pop()


def _restated(text: str, asked: set[str]) -> tuple[set[str], bool]:
    """The question's words a text repeats, and whether it denies them: a negation ('not', 'no', 'cannot') or an
    asked word's opposite ('insufficient' for 'sufficient'), but not both ('not insufficient')."""
    restated, opposite = set(), False
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if _stem(word) in asked:
            restated.add(_stem(word))
            continue
        for prefix in ("in", "un", "non", "im", "ir", "dis"):
            if word.startswith(prefix) and _stem(word[len(prefix) :]) in asked:
                restated.add(_stem(word[len(prefix) :]))
                opposite = True
                break
    negated = bool(_NEGATION.search(text) or re.search(r"\bno\b", text, re.IGNORECASE))
    return restated, negated != opposite


def _yes_no_stance(rationale: str, question: str, first: bool = False) -> tuple[str, str] | None:
    """'yes' or 'no' and the sentence that says it: one that opens with the word, else the one with the clause
    that restates the most of the question's words (half of them at least); several that restate as many must
    agree. A line that only names the letter
    ("Therefore, the answer is B. no.") is not the argument: the reasoning before it is."""
    said = [s[: m.start()] if (m := _ANSWER_LINE.search(s)) else s for s in sentences(rationale)]
    said = [s for s in said if s.strip()]
    for sentence in said:
        if opening := re.match(r"(yes|no)\b", sentence, re.IGNORECASE):
            return opening.group(1).lower(), sentence
    asked = set(_stems(question))
    read = [(*_stance(s, asked), s) for s in said]
    most = max((n for n, _, _ in read), default=0)
    if not asked or most / len(asked) < MIN_RESTATED:
        return None
    top = [(stance, s) for n, stance, s in read if n == most]
    if len({stance for stance, _ in top}) != 1 or top[0][0] is None:
        return None
    return top[0] if first else top[-1]  # where the reasoning concludes: first when the answer came first


def _is_yes_no(options: dict[str, str]) -> bool:
    texts = {v.strip(" .").lower() for v in options.values()}
    return {"yes", "no"} <= texts <= _YES_NO


# -- the check ------------------------------------------------------------------------------------------------


def check_answer(answer: Answer | None, options: dict[str, str], question: str = "") -> Mismatch | None:
    """A mismatch when the reasoning concludes for another option than the one chosen."""
    if answer is None or not answer.choice or not answer.rationale or not options:
        return None
    named = named_options(answer.rationale, options, question)
    if _is_yes_no(options):
        found = _yes_no_stance(answer.rationale, question, answer.answer_format == "answer first")
        if found is None:
            return None
        stance, sentence = found
        chosen = options.get(answer.choice, "").strip(" .").lower()
        argued = next((k for k, v in options.items() if v.strip(" .").lower() == stance), None)
        if chosen not in ("yes", "no") or argued is None or chosen == stance:
            return None
        return Mismatch(chosen=answer.choice, argued=argued, named=named, because=sentence)
    arguing, rejected = _read(answer, options, question)
    found = _concluding(answer, arguing)
    if answer.choice in rejected:
        return Mismatch(
            chosen=answer.choice, argued=found[0][0] if found else None, named=named, because=rejected[answer.choice]
        )
    if not found or answer.choice in found[0]:
        return None
    return Mismatch(chosen=answer.choice, argued=found[0][0], named=named, because=found[1])
