# The board's /main.py: MicroPython runs it after boot.py. Ctrl-C (mpremote does that before it
# copies files) stops the reader and gives the REPL back.
import btreader.board  # type: ignore[import-not-found]

btreader.board.main()
