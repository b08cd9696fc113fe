"""Container logs, kept beside the objects (not in them), as a kubelet keeps them on its node.

Part 2's workload executor writes here; ``GET pods/NAME/log`` reads here. Logs are not counted in
the memory target, and they are dropped when the pod is deleted or the server resets.
"""

from __future__ import annotations

import threading

LogKey = tuple[str, str, str]  # namespace, pod, container


class PodLogs:
    """Append-only text per container, with a condition so ``follow=true`` readers wake up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.changed = threading.Condition(self._lock)
        self._text: dict[LogKey, str] = {}

    def append(self, namespace: str, pod: str, container: str, text: str) -> None:
        with self.changed:
            key = (namespace, pod, container)
            self._text[key] = self._text.get(key, "") + text
            self.changed.notify_all()

    def read(
        self, namespace: str, pod: str, container: str, *, tail_lines: int | None = None, limit_bytes: int | None = None
    ) -> str:
        with self._lock:
            text = self._text.get((namespace, pod, container), "")
        if tail_lines is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-tail_lines:]) if tail_lines > 0 else ""
        if limit_bytes is not None:
            text = text.encode()[:limit_bytes].decode(errors="ignore")
        return text

    def size(self, namespace: str, pod: str, container: str) -> int:
        with self._lock:
            return len(self._text.get((namespace, pod, container), ""))

    def forget(self, namespace: str, pod: str) -> None:
        with self._lock:
            for key in [k for k in self._text if k[:2] == (namespace, pod)]:
                del self._text[key]

    def clear(self) -> None:
        with self._lock:
            self._text.clear()
