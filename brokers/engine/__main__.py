"""``python -m brokers.engine namesrv|broker|proxy|member ...``: run a name server, a broker or a proxy.

Exit codes: 0 clean stop (or help), 1 could not start (also: the servers are not installed, as
in the gantry-client wheel, which ships the clients only), 2 bad arguments.
"""

from __future__ import annotations

import sys

USAGE = """usage: python -m brokers.engine {namesrv,broker,proxy,member} [options]

commands:
  namesrv   run a name server (route registry), e.g.
              python -m brokers.engine namesrv --port 9876
  broker    run a broker that registers with name servers, e.g.
              python -m brokers.engine broker --name broker-a --port 10911 \\
                  --namesrv 127.0.0.1:9876 --store-dir var/broker-a
  proxy     run the 5.x clients' gRPC endpoint in front of a whole cluster, e.g.
              python -m brokers.engine proxy --namesrv 127.0.0.1:9876 --grpc-port 8081
  member    run one member of a cluster spec (written by the cluster harness,
            brokers/engine/cluster/processes.py), e.g.
              python -m brokers.engine member var/logs/broker-a.launch.json

Run "python -m brokers.engine <command> --help" for a command's options.
"""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command in ("namesrv", "broker", "proxy", "member"):
        try:
            if command == "namesrv":
                from brokers.engine.namesrv.server import main as run
            elif command == "proxy":
                from brokers.engine.proxy.standalone import main as run
            elif command == "member":
                from brokers.engine.cluster.member import main as run
            else:
                from brokers.engine.broker.startup import main as run
        except ModuleNotFoundError as exc:  # the gantry-client wheel ships the clients, not the servers
            if not (exc.name or "").startswith(
                ("brokers.engine.namesrv", "brokers.engine.broker", "brokers.engine.cluster", "brokers.engine.proxy")
            ):
                raise
            print(
                f"error: the {command} is not installed here (the gantry-client package holds the clients "
                "only); run it from a Gantry checkout",
                file=sys.stderr,
            )
            return 1
        return run(rest)
    print(f"error: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    sys.exit(main())
