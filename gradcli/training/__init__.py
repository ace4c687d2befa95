"""Training: one loop for every backend (loop.py), fed by the data's batches (feed.py), with
learning-rate schedules (schedule.py); a backend plugs in through a Trainee."""
from .loop import NonfiniteLoss, Trainee, train
from .schedule import Schedule, learning_rate

__all__ = ["NonfiniteLoss", "Schedule", "Trainee", "learning_rate", "train"]
