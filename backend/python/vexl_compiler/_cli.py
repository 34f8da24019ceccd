"""The ``vexlc`` console script: forwards to the bundled executable."""

import subprocess
import sys


def main(argv=None):
    """Run the bundled vexlc with ``argv`` and return its exit status.

    Standard streams are inherited. A vexlc killed by signal N yields
    128 + N, the shell convention. This is the ``vexlc`` console-script
    entry point (``vexlc = vexl_compiler._cli:main``).
    """
    from vexl_compiler import VexlcNotFound, vexlc_path

    if argv is None:
        argv = sys.argv[1:]
    try:
        exe = vexlc_path()
    except VexlcNotFound as exc:
        print("vexlc: %s" % exc, file=sys.stderr)
        return 127
    try:
        code = subprocess.call([exe] + list(argv))
    except KeyboardInterrupt:
        return 130
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
