"""Docker sandbox: task bundles, images built by content hash, limited throwaway containers."""
