"""The stand-in's server: what OGS answers gtp2ogs, on a loopback port, on a thread.

The messages, from gtp2ogs 9.0.1 and goban's GobanSocket: JSON arrays `[command, data, id]`
from the client (answered `[id, data]`) and `[event, data]` from the server. A session:
`authenticate` (answered with the bot's id), `bot/config`, `net/ping` (answered `net/pong`);
a `notification` of type `challenge`, which gtp2ogs accepts over HTTP
(`POST /api/v1/me/challenges/ID/accept`); `active_game` announcing the game; `game/connect`
(answered with `game/ID/gamedata`); then `game/move` and `game/resign` from the bot, and
`game/ID/move`, `game/ID/clock` and, at the end, a finished gamedata from the server.
"""

import asyncio
import re
import threading
import time
from urllib.parse import parse_qs

from tests.ogs_standin import wire
from tests.ogs_standin.game import BOT_ID, Game, now_ms

CHALLENGE = re.compile(r"^/api/v1/me/challenges/(\d+)(/accept)?$")
RESIGN_DELAY = 0.3  # seconds into the bot's turn at which a scripted resignation comes (its
#                     moves take 0.7 s and more at the tests' clocks; gtp2ogs relays in ms)


class StandIn:
    """Start with `start()`; `challenge(...)` offers a game to the connected bot and
    `wait_finished(game_id)` returns it when it ends. Everything seen is in `events`."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.events: list[tuple[float, str, object]] = []  # (time, what, data)
        self.games: dict[int, Game] = {}
        self.opponents = {}
        self._offers: dict[int, tuple[Game, object]] = {}
        self._sockets: list[wire.WebSocket] = []
        self._authenticated = threading.Event()
        self._finished: dict[int, threading.Event] = {}
        self._first_turn_waits: set[int] = set()  # games whose opponent moves once connected
        self._next_id = 100

    # ---- the test's side (any thread) ---------------------------------------------------------
    def start(self) -> int:
        ready = threading.Event()

        async def serve():
            server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            self._server = server
            ready.set()
            async with server:
                try:
                    await server.serve_forever()
                except asyncio.CancelledError:
                    pass
        threading.Thread(target=self.loop.run_until_complete, args=(serve(),), daemon=True,
                         name="ogs-standin").start()
        ready.wait(10)
        return self.port

    def wait_authenticated(self, timeout: float) -> bool:
        return self._authenticated.wait(timeout)

    def challenge(self, time_control: dict, bot_color: str, opponent_factory, komi=7.0,
                  size=9) -> int:
        """Offer a game; the bot's acceptance starts it. opponent_factory(game) -> GnuGo."""
        self._next_id += 1
        gid = self._next_id
        game = Game(gid, time_control, bot_color, size, komi)
        self._finished[gid] = threading.Event()
        self._offers[gid] = (game, opponent_factory)
        note = {"id": f"challenge-{gid}", "type": "challenge", "challenge_id": gid,
                "game_id": gid, "user": {"id": 2002, "username": "scripted", "ranking": 20},
                "width": size, "height": size, "handicap": 0, "ranked": False, "komi": komi,
                "min_ranking": 20, "time_control": time_control,
                "challenger_color": game.other(bot_color)}
        self._call(self._broadcast(["notification", note]))
        return gid

    def wait_finished(self, gid: int, timeout: float) -> Game | None:
        done = self._finished[gid].wait(timeout)
        return self.games.get(gid) if done else None

    def stop(self) -> None:
        for opp in self.opponents.values():
            opp.close()
        self.loop.call_soon_threadsafe(self._server.close)

    def _call(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop)

    def _log(self, what: str, data=None) -> None:
        self.events.append((time.monotonic(), what, data))

    # ---- connections ------------------------------------------------------------------------
    async def _client(self, reader, writer) -> None:
        request = await wire.read_request(reader)
        if request is None:
            writer.close()
            return
        method, path, headers, body = request
        if headers.get("upgrade", "").lower() == "websocket":
            ws = await wire.upgrade(reader, writer, headers)
            self._sockets.append(ws)
            self._log("connect")
            while (msg := await ws.receive()) is not None:
                await self._message(ws, msg)
            self._sockets.remove(ws)
            self._log("disconnect")
        else:
            self._log("http", (method, path, body.decode(errors="replace")))
            status, answer = await self._http(method, path, body)
            wire.respond(writer, status, answer)
            await writer.drain()
        writer.close()

    async def _http(self, method: str, path: str, body: bytes):
        m = CHALLENGE.match(path.split("?")[0])
        form = {k: v[0] for k, v in parse_qs(body.decode(errors="replace")).items()}
        if method != "POST" or m is None or form.get("apikey") != "standin-key":
            return 404, {"error": "not found"}
        gid = int(m.group(1))
        if gid not in self._offers:
            return 404, {"error": "no such challenge"}
        if m.group(2):  # accepted: the game starts
            game, factory = self._offers.pop(gid)
            self.games[gid] = game
            self.opponents[gid] = factory(game)
            game.turn_started = time.monotonic()
            await self._broadcast(["active_game", {"id": gid, "phase": "play"}])
            if game.to_move != game.bot_color:  # once the bot follows the game, as a person
                self._first_turn_waits.add(gid)  # cannot move within the same millisecond
            return 200, {"time_per_move": 10}
        self._offers.pop(gid)
        self._log("declined", gid)
        self._finished[gid].set()
        return 200, {}

    async def _broadcast(self, message) -> None:
        for ws in list(self._sockets):
            await ws.send(message)

    async def _message(self, ws, msg) -> None:
        command, data = msg[0], msg[1] if len(msg) > 1 else None
        rid = msg[2] if len(msg) > 2 else None
        if command != "net/ping":
            self._log(command, data)
        answer = {}
        if command == "authenticate":
            if data.get("bot_apikey") != "standin-key":
                answer = None
            else:
                answer = {"id": BOT_ID, "username": "dosaku-bot"}
                self._authenticated.set()
        elif command == "net/ping":
            await ws.send(["net/pong", {"client": data["client"], "server": now_ms()}])
        elif command == "game/connect":
            game = self.games.get(data["game_id"])
            if game is not None:
                await ws.send([f"game/{game.game_id}/gamedata", game.gamedata()])
                if game.game_id in self._first_turn_waits:
                    self._first_turn_waits.discard(game.game_id)
                    asyncio.ensure_future(self._opponent_turn(game))
        elif command == "game/move":
            await self._bot_move(data)
        elif command == "game/resign":
            game = self.games.get(data["game_id"])
            if game is not None and game.phase == "play":
                game.finish(game.other(game.bot_color), "Resignation")
                await self._finish(game)
        if rid is not None:
            await ws.send([rid, answer])

    # ---- the game ---------------------------------------------------------------------------
    async def _bot_move(self, data) -> None:
        game = self.games.get(data["game_id"])
        if game is None:
            return
        text = data["move"]
        xy = None if text == ".." else ("abcdefghijklmnopqrstuvwxyz".index(text[0]),
                                         "abcdefghijklmnopqrstuvwxyz".index(text[1]))
        await self._apply(game, game.bot_color, xy)
        if game.phase == "play":
            asyncio.ensure_future(self._opponent_turn(game))

    async def _apply(self, game: Game, color: str, xy) -> None:
        why = game.play(color, xy)
        self._log("move", (game.game_id, color, xy, why))
        if why is not None:
            await self._finish(game)
            return
        n = len(game.moves)
        opp = self.opponents[game.game_id]
        if color == game.bot_color:  # GNU Go has its own moves on its board already
            await self.loop.run_in_executor(None, opp.tell, color, xy)
        await self._broadcast([f"game/{game.game_id}/move", {
            "game_id": game.game_id, "move_number": n, "move": game.move_json(n - 1)}])
        await self._broadcast([f"game/{game.game_id}/clock", game.clock_json()])
        if game.two_passes():
            score = await self.loop.run_in_executor(None, opp.final_score)
            game.finish("black" if score > 0 else "white", f"{abs(score):g} points")
            await self._finish(game)

    async def _opponent_turn(self, game: Game) -> None:
        try:
            await self._opponent_move(game)
        except Exception as err:  # end the game where the test sees it, not hang it
            self._log("stand-in error", repr(err))
            if game.phase == "play":
                game.finish(game.bot_color, f"stand-in error: {err!r}")
                await self._finish(game)

    async def _opponent_move(self, game: Game) -> None:
        opp = self.opponents[game.game_id]
        n = len(game.moves) + 1
        xy = await self.loop.run_in_executor(None, opp.reply, n)
        if game.phase != "play":
            return
        await self._apply(game, opp.color, xy)
        if game.phase == "play" and opp.resign_at is not None and n >= opp.resign_at:
            await asyncio.sleep(RESIGN_DELAY)  # the bot is thinking now
            if game.phase == "play":
                self._log("opponent resigns", game.game_id)
                game.finish(game.bot_color, "Resignation")
                await self._finish(game)

    async def _finish(self, game: Game) -> None:
        self._log("finished", (game.game_id, game.outcome, game.winner))
        await self._broadcast([f"game/{game.game_id}/gamedata", game.gamedata()])
        await self._broadcast(["active_game", {"id": game.game_id, "phase": "finished"}])
        self._finished[game.game_id].set()
