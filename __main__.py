"""The Pulumi program `pulumi up` runs in this folder: components/program.py, which lives in the
package so that `python -m cluster plan` runs the same program from any directory, and a project
that `gpu-cluster init` starts needs only these lines."""

from components.program import main

main()
