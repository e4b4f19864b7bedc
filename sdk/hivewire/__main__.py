"""``python -m hivewire`` is the ``hivewire`` command."""

from hivewire.tools._cli import main

main()
