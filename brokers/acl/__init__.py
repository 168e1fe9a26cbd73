"""The console's view of the brokers' ACL: read-only for every role, changed by admins (audited)."""
