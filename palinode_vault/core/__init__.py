"""The pure core: functions of their arguments, no file system, SQLite, models or sockets."""
