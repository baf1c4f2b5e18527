"""A Hangar client in Python, on Debian's packages alone.

It lists the games the server hosts, registers two players, plays an
Aeroplane Chess match to the end as one of them against a bot, and has the
other watch the match as a spectator from its first event.

    apt-get install python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc
    /usr/bin/python3 examples/python/play.py --addr 127.0.0.1:7350

Run it from the repository's root, or pass --proto. It generates its stubs
from proto/ into a temporary directory at start (protoc with
grpc_python_plugin); no generated code is kept. A game's own messages
(options, actions, events) travel as google.protobuf.Any: the client packs
its options with Any.Pack and reads the game's events with Any.Unpack. The
player learns whose turn it is from its watch stream and acts when the turn
is its own: ListLegalActions, then Act with the first of them as it came.
It exits 1 on any failure.
"""

import argparse
import glob
import importlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading

# Every file of hangar/v1 (the services import each other's messages),
# and these.
PROTOS = [
    "hangar/aeroplane/v1/aeroplane.proto",
    "google/api/annotations.proto",
    "google/api/http.proto",
    "google/rpc/status.proto",
    "google/rpc/error_details.proto",
]


def generate(proto_dir, out):
    """Generates the Python messages and gRPC stubs of proto_dir into out."""
    for tool in ("protoc", "grpc_python_plugin"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on PATH: apt-get install protobuf-compiler protobuf-compiler-grpc")
    cmd = [
        "protoc",
        "-I", proto_dir,
        "--python_out", out,
        "--grpc_python_out", out,
        "--plugin=protoc-gen-grpc_python=" + shutil.which("grpc_python_plugin"),
        *sorted(os.path.relpath(f, proto_dir) for f in glob.glob(os.path.join(proto_dir, "hangar", "v1", "*.proto"))),
        *PROTOS,
    ]
    subprocess.run(cmd, check=True)
    sys.path.insert(0, out)


def request_id():
    """A random request id makes a call safe to retry."""
    return secrets.token_hex(16)


class Client:
    """The services of one channel, and the messages they speak."""

    def __init__(self, channel):
        self.pb = importlib.import_module("hangar.v1.match_pb2")
        self.player_pb = importlib.import_module("hangar.v1.player_pb2")
        self.move_pb = importlib.import_module("hangar.v1.move_pb2")
        self.game_pb = importlib.import_module("hangar.v1.game_pb2")
        self.aeroplane = importlib.import_module("hangar.aeroplane.v1.aeroplane_pb2")
        grpcs = {n: importlib.import_module(f"hangar.v1.{n}_pb2_grpc") for n in ("game", "player", "match", "move")}
        self.games = grpcs["game"].GameServiceStub(channel)
        self.players = grpcs["player"].PlayerServiceStub(channel)
        self.matches = grpcs["match"].MatchServiceStub(channel)
        self.moves = grpcs["move"].MoveServiceStub(channel)

    def create_player(self, name):
        """Registers a player; returns the metadata that authenticates as it, and its id."""
        r = self.players.CreatePlayer(self.player_pb.CreatePlayerRequest(display_name=name, request_id=request_id()))
        return [("authorization", "Bearer " + r.token)], r.player.player_id

    def play(self, auth, match_id, seat):
        """Plays seat until the match ends, acting on what the watch stream says."""
        import grpc

        rolls = moves = 0
        # acted is the version our last command reached: one command appends
        # several events, and the ones before its last are already history.
        acted = 0
        for w in self.matches.WatchMatch(self.pb.WatchMatchRequest(match_id=match_id), metadata=auth):
            if w.version < acted or not w.HasField("turn_seat") or w.turn_seat != seat:
                continue
            la = self.moves.ListLegalActions(self.move_pb.ListLegalActionsRequest(match_id=match_id), metadata=auth)
            if not la.actions:
                continue
            action = la.actions[0]
            try:
                r = self.moves.Act(
                    self.move_pb.ActRequest(match_id=match_id, expected_version=la.version,
                                            request_id=request_id(), action=action),
                    metadata=auth)
            except grpc.RpcError as e:
                # ABORTED: the match had moved on past this event (one in the
                # middle of a command); the next event says where it stands.
                if e.code() != grpc.StatusCode.ABORTED:
                    raise
                continue
            if action.Is(self.aeroplane.Roll.DESCRIPTOR):
                rolls += 1
            elif action.Is(self.aeroplane.Move.DESCRIPTOR):
                moves += 1
            acted = max(acted, r.version)
        return rolls, moves

    def spectate(self, auth, match_id, out):
        """Watches a match from its first event to its end and checks that every
        event comes once, in order; puts the count of events and of the game's
        ROLLED events in out."""
        events = rolls = 0
        for w in self.matches.WatchMatch(self.pb.WatchMatchRequest(match_id=match_id, after_seq=0), metadata=auth):
            seq = w.event.seq
            if seq != events + 1 or w.version != seq:
                raise RuntimeError(f"spectator: event {seq} (version {w.version}) after event {events}")
            events += 1
            # A game's event is its own message in an Any.
            if w.event.HasField("game"):
                e = self.aeroplane.Event()
                if not w.event.game.Unpack(e):
                    raise RuntimeError(f"spectator: event {seq} is not an Aeroplane Chess event")
                if e.kind == self.aeroplane.EVENT_KIND_ROLLED:
                    rolls += 1
        out["events"], out["rolls"] = events, rolls


def run(addr):
    import grpc

    with grpc.insecure_channel(addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        c = Client(channel)

        # ListGames needs no token: every hosted game, by name, with the
        # names of its message types.
        for g in c.games.ListGames(c.game_pb.ListGamesRequest()).games:
            print(f"game {g.name}: {g.title}, {g.min_seats} to {g.max_seats} seats, options {g.options_type}")

        ada, ada_id = c.create_player("Ada")
        bob, _ = c.create_player("Bob")

        # The options are the game's own message, packed in an Any.
        req = c.pb.CreateMatchRequest(game="aeroplane", seat_count=2, bot_seats=1, request_id=request_id())
        req.options.Pack(c.aeroplane.Options(first_player=c.aeroplane.FIRST_PLAYER_SEAT0))
        # Ada takes a seat and a bot the other; the match is full, so it starts.
        m = c.matches.CreateMatch(req, metadata=ada).match
        match_id = m.match_id
        seat = next(s.seat for s in m.seats if s.player_id == ada_id)
        print(f"match {match_id}: Ada plays seat {seat} against a bot")

        watched, failed = {}, []

        def spectate():
            try:
                c.spectate(bob, match_id, watched)
            except Exception as e:  # reported by the main thread
                failed.append(e)

        spectator = threading.Thread(target=spectate)
        spectator.start()
        rolls, moves = c.play(ada, match_id, seat)
        spectator.join(timeout=60)
        if failed:
            raise failed[0]
        if "events" not in watched:
            raise RuntimeError("spectator: the watch did not end with the match")

        m = c.matches.GetMatch(c.pb.GetMatchRequest(match_id=match_id), metadata=ada).match
        status = c.pb.MatchStatus.Name(m.status)
        if m.status != c.pb.MATCH_STATUS_FINISHED:
            raise RuntimeError(f"match is {status}, want MATCH_STATUS_FINISHED")
        if watched["events"] != m.version:
            raise RuntimeError(f"spectator saw {watched['events']} events, the match has {m.version}")
        if watched["rolls"] < rolls:
            raise RuntimeError(f"spectator saw {watched['rolls']} rolls, Ada rolled {rolls} times")
        print(f"match {match_id}: {status} at version {m.version}")
        for s in sorted(m.seats, key=lambda s: s.place):
            name = "bot" if s.status == c.pb.SEAT_STATUS_BOT else s.display_name
            print(f"  place {s.place}: seat {s.seat} ({name})")
        print(f"Ada: {rolls} rolls, {moves} moves")
        print(f"spectator: saw {watched['events']} events, 1..{m.version} in order, each once")
        print(f"spectator: {watched['rolls']} of them the die's rolls")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--addr", default=os.environ.get("HANGAR_ADDR", "127.0.0.1:7350"),
                   help="the server's gRPC address (env HANGAR_ADDR)")
    p.add_argument("--proto", default=os.path.join(here, "..", "..", "proto"), help="the directory of Hangar's .proto files")
    args = p.parse_args()
    try:
        import grpc  # noqa: F401
    except ImportError:
        sys.exit("no grpc module: apt-get install python3-grpcio python3-protobuf (and run /usr/bin/python3)")
    with tempfile.TemporaryDirectory(prefix="hangar-py-") as out:
        generate(os.path.normpath(args.proto), out)
        try:
            run(args.addr)
        except Exception as e:
            sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
