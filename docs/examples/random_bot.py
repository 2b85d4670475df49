"""A bot that accepts every challenge and plays random legal moves (see docs/bots.md).
Run: CHECKERS_URL=http://127.0.0.1:8000 CHECKERS_TOKEN=<a bot's token> python random_bot.py"""

import json
import os
import random
import threading

import httpx

URL = os.environ.get("CHECKERS_URL", "http://127.0.0.1:8000")
HEADERS = {"Authorization": f"Bearer {os.environ['CHECKERS_TOKEN']}"}


def lines(client: httpx.Client, path: str):  # one JSON object a line; empty lines keep alive
    with client.stream("GET", path, timeout=None) as response:
        yield from (json.loads(line) for line in response.iter_lines() if line)


def play(game_id: int, colour: str) -> None:
    with httpx.Client(base_url=URL, headers=HEADERS) as client:
        for event in lines(client, f"/api/bot/game/stream/{game_id}"):
            state = event.get("state", event)  # gameFull holds the state, gameState is one
            if state["status"] == "started" and state["turn"] == colour:
                move = random.choice(state["legal_moves"])
                client.post(f"/api/bot/game/{game_id}/move/{move}")


with httpx.Client(base_url=URL, headers=HEADERS) as client:
    for event in lines(client, "/api/stream/event"):
        if event["type"] == "challenge":
            client.post(f"/api/challenge/{event['challenge']['id']}/accept")
        elif event["type"] == "gameStart":
            game = event["game"]
            threading.Thread(target=play, args=(game["id"], game["color"]), daemon=True).start()
