"""The official OpenAI Python client, unchanged, against a molmesh base URL.

Usage: python openai_client_flows.py FLOW  (MOL_BASE_URL and MOL_API_KEY in the environment)
Prints one JSON object with what the flow saw; test/clients/python-client.test.ts asserts on it.
"""

import json
import os
import sys

from openai import OpenAI
from typing import Annotated

from pydantic import BaseModel, Field


class Recipe(BaseModel):
    # Bounded: the random-weight test model only closes a string or a list because the grammar must.
    title: str = Field(max_length=24)
    servings: int
    vegetarian: bool
    tags: list[Annotated[str, Field(max_length=12)]] = Field(max_length=3)


def client() -> OpenAI:
    return OpenAI(base_url=os.environ["MOL_BASE_URL"], api_key=os.environ["MOL_API_KEY"], max_retries=0)


def plain() -> dict:
    response = client().responses.create(
        model="mol", instructions="Be brief.", input="say hello", max_output_tokens=16
    )
    return {"id": response.id, "status": response.status, "output_text": response.output_text}


def stream() -> dict:
    events: list[str] = []
    deltas: list[str] = []
    final = None
    with client().responses.stream(model="mol", input="say hello", max_output_tokens=16) as stream:
        for event in stream:
            events.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            # get_final_response() insists on response.completed; a turn cut by the limit ends incomplete.
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    assert final is not None, "no terminal event"
    return {"events": events, "text": "".join(deltas), "output_text": final.output_text, "status": final.status}


def parse() -> dict:
    response = client().responses.parse(
        model="mol", input="A recipe for pancakes", text_format=Recipe, max_output_tokens=256
    )
    parsed = response.output_parsed
    return {
        "id": response.id,
        "status": response.status,
        "output_text": response.output_text,
        "parsed": parsed.model_dump() if parsed is not None else None,
        "parsed_type": type(parsed).__name__,
    }


FLOWS = {"plain": plain, "stream": stream, "parse": parse}

if __name__ == "__main__":
    print(json.dumps(FLOWS[sys.argv[1]]()))
