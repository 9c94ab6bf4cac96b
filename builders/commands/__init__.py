"""``clincorp``'s commands: one module per command, each with ``configure(parser)`` and ``run(args)`` turning
the parsed arguments into a typed argument object (as TFDS's ``scripts/cli`` and Hugging Face's
``datasets/commands`` do); ``main.py`` registers and dispatches them."""
