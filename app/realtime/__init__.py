"""The websocket face: endpoint, protocol messages, connection handling."""
