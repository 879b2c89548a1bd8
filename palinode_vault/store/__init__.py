"""The SQLite store: one connection API over whichever driver can load sqlite-vec."""

from palinode_vault.store.sqlite import (
    Connection,
    DriverReport,
    StoreError,
    connect,
    driver_reports,
    serialize_vector,
)

__all__ = ["Connection", "DriverReport", "StoreError", "connect", "driver_reports", "serialize_vector"]
