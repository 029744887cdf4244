"""``torch.PyTorchFileReader``: the records of a ``torch.save`` zip archive, by name.

PyTorch's reader (``torch._C.PyTorchFileReader``) opens the archive ``torch.save`` writes and hands out its members
("records") by their names inside the archive's single top folder: ``data.pkl``, ``data/0``, ``version``,
``.data/serialization_id``... Libraries read ``data.pkl`` with it to unpickle a checkpoint their own way (Lightning's
lazy loader). ember reads the same archives (``_archive.Archive``: stored members only, sizes checked against the
file). Difference from PyTorch: the storage and offset methods (``get_storage_from_record``,
``get_record_offset``...) are not provided; their names raise ember's MissingFeatureError.
"""

from __future__ import annotations

import os
import zipfile
from typing import IO, NoReturn

from .._missing import missing
from ._archive import Archive


class PyTorchFileReader:
    """The records of the ``torch.save`` archive at ``file`` (a path, or a binary file object open for reading)."""

    def __init__(self, file: str | os.PathLike | IO[bytes]) -> None:
        self._owned: IO[bytes] | None = None  # a file opened here: closed with the reader, as PyTorch's
        if isinstance(file, (str, os.PathLike)):
            try:
                file = self._owned = open(file, "rb")  # noqa: SIM115 (held for the reader's lifetime)
            except OSError as e:
                raise RuntimeError(f"open file failed because of errno {e.errno} on fopen: {e.strerror}, "
                                   f"file path: {os.fspath(file)}") from None
        try:
            self._archive = Archive(file, self._fail)
        except Exception as e:
            self.__del__()
            if isinstance(e, RuntimeError):
                raise
            self._fail(f"failed reading zip archive: {e}")  # zipfile's BadZipFile: PyTorch raises RuntimeError
        names = self._archive.names()
        folders = {name.partition("/")[0] for name in names}
        if not names or len(folders) != 1 or any("/" not in name for name in names):
            self._fail("failed reading zip archive: the records are not in one top folder, as torch.save writes them")
        self._prefix = f"{folders.pop()}/"

    def __del__(self) -> None:
        if self._owned is not None:
            self._owned.close()

    @staticmethod
    def _fail(why: str) -> NoReturn:
        raise RuntimeError(f"PytorchStreamReader {why}")

    def get_all_records(self) -> list[str]:
        """The records' names, in the archive's order, without the top folder."""
        return [name[len(self._prefix):] for name in self._archive.names()]

    def has_record(self, name: str) -> bool:
        return self._prefix + name in self._archive.infos

    def get_record(self, name: str) -> bytes:
        """The record's bytes; a RuntimeError for a name the archive lacks, as PyTorch's."""
        if not self.has_record(name):
            self._fail(f"failed locating file {name}: file not found")
        info = self._archive.infos[self._prefix + name]
        try:
            return self._archive.read(self._prefix + name, limit=info.file_size)
        except (zipfile.BadZipFile, OSError, EOFError) as e:  # a corrupt local header or CRC: PyTorch's RuntimeError
            self._fail(f"failed reading file {name}: invalid header or archive is corrupted ({e})")

    def get_record_size(self, name: str) -> int:
        if not self.has_record(name):
            self._fail(f"failed locating file {name}: file not found")
        return self._archive.infos[self._prefix + name].file_size

    def serialization_id(self) -> str:
        """The id ``torch.save`` wrote in ``.data/serialization_id`` (empty for an archive without one)."""
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(f"'PyTorchFileReader' object has no attribute '{name}'")
        raise missing("'PyTorchFileReader' object", f"torch.PyTorchFileReader.{name}")
