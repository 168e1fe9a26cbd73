"""The ``mqadmin`` management command's pieces: RocketMQ mqadmin subcommands over the admin client.

``subcommands`` holds one class per subcommand (its flags and what it prints), ``output`` the
formatting shared by them (Java mqadmin's column layouts, times, versions).
"""
