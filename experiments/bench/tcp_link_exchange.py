#!/usr/bin/env python3
"""The exchange bench_link_exchange times, over one plain TCP connection instead of MPI.

Two processes, one per end of a link: each sends SIZE bytes to the other (or only the client
sends, "one way") after a pause, while it receives. Comparing its rates with
bench_link_exchange's on the same link separates what the link delivers from what the MPI
transport gets out of it (docs/validation.md).

    tcp_link_exchange.py server ADDRESS [options] &     # on one end
    tcp_link_exchange.py client ADDRESS [options]       # on the other: prints the results

The client prints one line per (size, pause, direction), then one JSON line.
"""
import argparse
import json
import socket
import statistics
import sys
import threading
import time

BYTES_PER_MIB = 1 << 20
PORT = 5599
CONNECT_SECONDS = 10.0


def parse_list(text, name):
    try:
        values = [int(item) for item in text.split(",")]
    except ValueError:
        raise SystemExit(f"tcp_link_exchange: --{name}: expected integers separated by commas, got {text!r}")
    if any(value < 0 for value in values):
        raise SystemExit(f"tcp_link_exchange: --{name}: values must be at least 0, got {text!r}")
    return values


def connect(role, address):
    if role == "server":
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, PORT))
        listener.listen(1)
        listener.settimeout(CONNECT_SECONDS)
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            raise SystemExit(f"tcp_link_exchange: no client connected to {address}:{PORT} "
                             f"within {CONNECT_SECONDS:.0f} s")
        listener.close()
    else:
        deadline = time.monotonic() + CONNECT_SECONDS
        while True:
            try:
                connection = socket.create_connection((address, PORT), timeout=CONNECT_SECONDS)
                break
            except OSError as error:
                if time.monotonic() > deadline:
                    raise SystemExit(f"tcp_link_exchange: cannot connect to {address}:{PORT}: {error}")
                time.sleep(0.05)
    connection.settimeout(None)
    # MPI's TCP transport disables Nagle's algorithm too.
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def receive_exactly(connection, count, buffer):
    received = 0
    while received < count:
        got = connection.recv_into(buffer, min(len(buffer), count - received))
        if got == 0:
            raise SystemExit("tcp_link_exchange: the other end closed the connection")
        received += got


def exchange(connection, role, payload, both, buffer):
    """One timed exchange; ends when this side has sent and received what it should."""
    sends = both or role == "client"
    receives = both or role == "server"
    sender = threading.Thread(target=connection.sendall, args=(payload,)) if sends else None
    if sender:
        sender.start()
    if receives:
        receive_exactly(connection, len(payload), buffer)
    if sender:
        sender.join()


def synchronise(connection, buffer):
    connection.sendall(b"s")
    receive_exactly(connection, 1, buffer)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("address", help="the server's address (the server listens on it)")
    parser.add_argument("--sizes-mib", default="1,16", help="message sizes in MiB (default 1,16)")
    parser.add_argument("--pause-ms", default="0,250", help="pause before each exchange, ms (default 0,250)")
    parser.add_argument("--repetitions", type=int, default=5, help="timed exchanges per point (default 5)")
    args = parser.parse_args()
    sizes_mib = parse_list(args.sizes_mib, "sizes-mib")
    pauses_ms = parse_list(args.pause_ms, "pause-ms")
    if args.repetitions < 1:
        raise SystemExit("tcp_link_exchange: --repetitions must be at least 1")

    connection = connect(args.role, args.address)
    buffer = bytearray(BYTES_PER_MIB)
    results = []  # bench_link_exchange's fields
    for size_mib in sizes_mib:
        payload = bytes(size_mib * BYTES_PER_MIB)
        for pause_ms in pauses_ms:
            for both in (False, True):
                exchange(connection, args.role, payload, both, buffer)  # warm-up
                seconds = []
                for _ in range(args.repetitions):
                    synchronise(connection, buffer)
                    time.sleep(pause_ms / 1000)
                    start = time.perf_counter()
                    exchange(connection, args.role, payload, both, buffer)
                    # The sender's time includes delivery: stop once the receiver has it all.
                    synchronise(connection, buffer)
                    seconds.append(time.perf_counter() - start)
                median_seconds = statistics.median(seconds)
                gbps = 8 * len(payload) / median_seconds / 1e9
                results.append({"bytes": len(payload), "pause_seconds": pause_ms / 1000, "both_ways": both,
                                "seconds_per_exchange": median_seconds, "gbps_per_direction": gbps})
                if args.role == "client":
                    print(f"{size_mib:4d} MiB, pause {pause_ms:4d} ms, {'both ways' if both else 'one way':9s}: "
                          f"{1e3 * median_seconds:9.3f} ms per exchange, {gbps:6.3f} Gbit/s per direction "
                          "(plain TCP)")
    connection.close()
    if args.role == "client":
        print(json.dumps({"bench": "tcp_link_exchange", "command": " ".join(sys.argv),
                          "repetitions": args.repetitions, "results": results}))


if __name__ == "__main__":
    main()
