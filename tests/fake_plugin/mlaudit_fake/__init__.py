"""A tracker plugin that exists only for tests (tests/test_fake_plugin.py): the "fake" tracker
keeps each run as ``<store>/<run id>.json``. It is installed the way a third-party plugin is,
by a distribution on ``sys.path`` whose ``entry_points.txt`` names it in ``mlaudit.trackers``
(``../mlaudit_fake-0.1.dist-info``); nothing in mlaudit names it."""
