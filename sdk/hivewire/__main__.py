"""``python -m hivewire`` is the ``hivewire`` command."""

from hivewire.cli import main

main()
