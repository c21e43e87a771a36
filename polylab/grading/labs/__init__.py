"""The labs' questions: one module per lab (``lab1.py`` defines ``LAB``); see docs/grading.md."""
